import type { KeyStore, SessionStore, UserStore } from './accounts/store.ts';
import type { BillingStore } from './billing/store.ts';
import type { ScreenshotStore } from './captures/store.ts';
import type { DestinationStore } from './destinations/store.ts';
import type { BatchStore, JobStore, WebhookStore } from './jobs/store.ts';
import type { MonitorStore } from './monitors/store.ts';
import type { QuotaStore } from './quota/store.ts';

/**
 * What the domain needs from persistence: the ports, each beside the domain it serves
 * (accounts/, quota/, billing/, captures/, jobs/, monitors/ `store.ts`), composed here into
 * the Store the use cases take. The Kysely implementation in adapters/db serves both SQLite
 * and PostgreSQL; the domain never sees SQL.
 */
export type {
  ApiKeyRecord,
  KeyStore,
  SessionStore,
  User,
  UserStore,
} from './accounts/store.ts';
export type {
  BillingAccount,
  BillingStore,
} from './billing/store.ts';
export type {
  CacheLookup,
  NewScreenshot,
  ScreenshotRecord,
  ScreenshotStore,
  StoredContent,
} from './captures/store.ts';
export type {
  DestinationStore,
  NewStorageDestination,
  StorageDestination,
} from './destinations/store.ts';
export type {
  BatchStore,
  CaptureBatch,
  CaptureJob,
  CompletedBatch,
  DeliveryStatus,
  JobEnd,
  JobOutcome,
  JobStatus,
  JobStore,
  Lease,
  NewDelivery,
  NewJob,
  WebhookAttempt,
  WebhookDelivery,
  WebhookStore,
} from './jobs/store.ts';
export type {
  Monitor,
  MonitorInput,
  MonitorRun,
  MonitorRunEnd,
  MonitorRunRef,
  MonitorStatus,
  MonitorStore,
  NewMonitor,
  RunStatus,
} from './monitors/store.ts';
export type {
  QuotaStore,
  QuotaUnit,
} from './quota/store.ts';

export interface Store {
  users: UserStore;
  sessions: SessionStore;
  keys: KeyStore;
  quota: QuotaStore;
  screenshots: ScreenshotStore;
  billing: BillingStore;
  jobs: JobStore;
  batches: BatchStore;
  webhooks: WebhookStore;
  monitors: MonitorStore;
  destinations: DestinationStore;
  /** Runs `fn` in one transaction: everything it does through `tx` commits or none of it. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}
