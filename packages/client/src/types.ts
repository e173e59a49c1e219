/**
 * The API's requests and answers, named. Each is looked up in schema.d.ts, which is generated
 * from the service's openapi.json (`npm run openapi:types` in the repository), so the client
 * cannot drift from the routes.
 */
import type { paths } from './schema.d.ts';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The body of POST /v1/screenshots: every capture option. */
export type CaptureRequest = Json<paths['/v1/screenshots']['post']['requestBody']>;
/** Capture options without the fields the client sets itself per call. */
export type CaptureOptions = Omit<CaptureRequest, 'async' | 'response_type' | 'webhook_url'>;
/** The 201 of a capture. */
export type CaptureResult = Json<paths['/v1/screenshots']['post']['responses'][201]>;
/** The 202 of an async capture. */
export type QueuedJob = Json<paths['/v1/screenshots']['post']['responses'][202]>;
/** GET /v1/screenshots/{id}: an async job's status, or a record's. */
export type ScreenshotStatus = Json<paths['/v1/screenshots/{id}']['get']['responses'][200]> & {
  [field: string]: unknown;
};
/** The 202 of POST /v1/screenshots/batch: the batch's id and one queued job per request. */
export type QueuedBatch = Json<paths['/v1/screenshots/batch']['post']['responses'][202]>;
/** GET /v1/screenshots/batch/{batch_id}: the batch's counts and each job's status. */
export type BatchStatus = Json<paths['/v1/screenshots/batch/{batch_id}']['get']['responses'][200]>;
/** One page of GET /v1/screenshots. */
export type ScreenshotList = Json<paths['/v1/screenshots']['get']['responses'][200]>;
/** The body of POST /v1/monitors (Pro). */
export type MonitorRequest = Json<paths['/v1/monitors']['post']['requestBody']>;
/** A monitor, as every monitor route answers it. */
export type Monitor = Json<paths['/v1/monitors/{id}']['get']['responses'][200]>;
/** The body of PATCH /v1/monitors/{id}: pause or resume, or change its schedule. */
export type MonitorUpdate = Json<paths['/v1/monitors/{id}']['patch']['requestBody']>;
/** One page of GET /v1/monitors. */
export type MonitorList = Json<paths['/v1/monitors']['get']['responses'][200]>;
/** The 202 of POST /v1/monitors/{id}/run. */
export type MonitorRunStarted = Json<paths['/v1/monitors/{id}/run']['post']['responses'][202]>;
/** One page of GET /v1/monitors/{id}/runs, newest first. */
export type MonitorRunList = Json<paths['/v1/monitors/{id}/runs']['get']['responses'][200]>;
/** One run of a monitor. */
export type MonitorRun = MonitorRunList['data'][number];
export type Usage = Json<paths['/v1/usage']['get']['responses'][200]>;
export type Plans = Json<paths['/v1/plans']['get']['responses'][200]>;
export type Devices = Json<paths['/v1/devices']['get']['responses'][200]>;
/** GET /v1/proxies: the operator's proxies, ids and countries only. */
export type Proxies = Json<paths['/v1/proxies']['get']['responses'][200]>;

/** The body of POST /v1/storage-destinations: your bucket and credentials that may write to it. */
export type StorageDestinationRequest = Json<
  paths['/v1/storage-destinations']['post']['requestBody']
>;
/** A storage destination as every destination route answers it: never its credentials. */
export type StorageDestination = Json<
  paths['/v1/storage-destinations/{id}']['get']['responses'][200]
>;
/** GET /v1/storage-destinations: the account's destinations, oldest first. */
export type StorageDestinationList = Json<
  paths['/v1/storage-destinations']['get']['responses'][200]
>;

/** A capture answered with its bytes (`response_type: "image"`), and its facts. */
export interface CapturedImage {
  bytes: Uint8Array;
  contentType: string;
  imageUrl: string;
  expiresAt: string;
  cached: boolean;
  quota: { used: number; limit: number };
  /** Listable (Pro) records only. */
  screenshotId: number | null;
}
