/**
 * The API's answers as the web app reads them, named. Every type is looked up in
 * schema.d.ts, which openapi-typescript generates from openapi.json (`npm run openapi:types`),
 * so a change to a route's response schema reaches the pages through `npm run typecheck`.
 */
import type { components, paths } from './schema.d.ts';

/** The methods `path` answers (openapi-typescript marks the others `?: never`). */
type Method<P extends keyof paths> = {
  [M in 'get' | 'post' | 'patch' | 'delete']: paths[P][M] extends { responses: object } ? M : never;
}['get' | 'post' | 'patch' | 'delete'];

type Responses<P extends keyof paths, M extends Method<P>> = paths[P][M] extends {
  responses: infer R;
}
  ? R
  : never;

/**
 * The JSON body of the `status` answer of `method path`, as openapi.json documents it. A path,
 * method or status the document does not have is a type error, not a silent `never`.
 */
export type JsonBody<
  P extends keyof paths,
  M extends Method<P>,
  S extends keyof Responses<P, M>,
> = Responses<P, M>[S] extends { content: { 'application/json': infer B } } ? B : never;

/** The body of POST /v1/screenshots, every field as the API document types it. */
export type CaptureRequestBody = NonNullable<
  paths['/v1/screenshots']['post']['requestBody']
>['content']['application/json'];

/** One entry of GET /v1/plans. */
export type Plan = JsonBody<'/v1/plans', 'get', 200>['data'][number];

/** The signed-in account (GET /v1/auth/me, and the answer to login and signup). */
export type User = JsonBody<'/v1/auth/me', 'get', 200>['user'];

/** One entry of GET /v1/keys. */
export type ApiKey = JsonBody<'/v1/keys', 'get', 200>['data'][number];
/** POST /v1/keys: the new key with its plaintext and signing secret, shown once. */
export type CreatedKey = JsonBody<'/v1/keys', 'post', 201>;
/** POST /v1/keys/{id}/signing-secret: the new signing secret, shown once. */
export type ReplacedSecret = JsonBody<'/v1/keys/{id}/signing-secret', 'post', 200>;

/** GET /v1/account/usage. */
export type AccountUsage = JsonBody<'/v1/account/usage', 'get', 200>;

/** GET /v1/account/screenshots: one page of the history. */
export type ScreenshotPage = JsonBody<'/v1/account/screenshots', 'get', 200>;
export type ScreenshotItem = ScreenshotPage['data'][number];

/** GET /v1/account/monitors: one page of the account's monitors. */
export type MonitorPage = JsonBody<'/v1/account/monitors', 'get', 200>;
export type Monitor = MonitorPage['data'][number];
/** The body of POST /v1/account/monitors. */
export type CreateMonitorBody = NonNullable<
  paths['/v1/account/monitors']['post']['requestBody']
>['content']['application/json'];
/** The body of PATCH /v1/account/monitors/{id}. */
export type UpdateMonitorBody = NonNullable<
  paths['/v1/account/monitors/{id}']['patch']['requestBody']
>['content']['application/json'];
/** GET /v1/account/monitors/{id}/runs: one page of a monitor's runs, newest first. */
export type RunPage = JsonBody<'/v1/account/monitors/{id}/runs', 'get', 200>;
export type MonitorRun = RunPage['data'][number];
/** The 202 of POST /v1/account/monitors/{id}/run. */
export type RunStarted = JsonBody<'/v1/account/monitors/{id}/run', 'post', 202>;

/** GET /v1/storage-destinations: the account's buckets, oldest first, never a secret. */
export type DestinationList = JsonBody<'/v1/storage-destinations', 'get', 200>;
export type StorageDestination = DestinationList['data'][number];
/** The body of POST /v1/storage-destinations. */
export type CreateDestinationBody = NonNullable<
  paths['/v1/storage-destinations']['post']['requestBody']
>['content']['application/json'];

/** POST /v1/screenshots. */
export type CaptureResult = JsonBody<'/v1/screenshots', 'post', 201>;

/** A batch as GET /v1/screenshots/batch/{batch_id} answers it, its jobs' states included. */
export type BatchResult = JsonBody<'/v1/screenshots/batch/{batch_id}', 'get', 200>;

/** The 202 of POST /v1/screenshots/batch. */
export type BatchQueued = JsonBody<'/v1/screenshots/batch', 'post', 202>;
/** POST /demo/screenshot. */
export type DemoResult = JsonBody<'/demo/screenshot', 'post', 201>;

/** GET /v1/billing/subscription. */
export type Subscription = JsonBody<'/v1/billing/subscription', 'get', 200>;
/** POST /v1/billing/checkout and /v1/billing/portal: the provider's page to go to. */
export type BillingRedirect = JsonBody<'/v1/billing/checkout', 'post', 200>;

/**
 * Every field an error answer may carry: the common body, the quota answer (402) and the rate
 * limit answer (429). All optional: a failed call may have no JSON body at all.
 */
export type ErrorBody = Partial<
  components['schemas']['ErrorBody'] &
    JsonBody<'/v1/screenshots', 'post', 402> &
    JsonBody<'/v1/screenshots', 'post', 429>
>;
