import type { ColumnType, Generated } from 'kysely';

/**
 * Table shapes as Kysely sees them. Every time is a UTC instant stored as epoch
 * milliseconds in a BIGINT (PostgreSQL) / INTEGER (SQLite) column: one exact, comparable
 * representation on both dialects. Flags are BOOLEAN on PostgreSQL and 0/1 on SQLite;
 * repositories read them with `Boolean()`.
 */
type Millis = ColumnType<number, number, number>;
type Flag = ColumnType<boolean | number, boolean, boolean>;

export interface UsersTable {
  id: Generated<number>;
  email: string;
  password_hash: string | null;
  plan: string;
  created_at: Millis;
  updated_at: Millis;
  /** Derives the account's webhook secret with the server secret; null: none made yet. */
  webhook_nonce: string | null;
}

export interface SessionsTable {
  /** SHA-256 (hex) of the cookie value; the value itself is never stored. */
  id: string;
  user_id: number;
  created_at: Millis;
  expires_at: Millis;
}

export interface ApiKeysTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  prefix: string;
  /** SHA-256 (hex) of the plaintext key. */
  key_hash: string;
  created_at: Millis;
  last_used_at: Millis | null;
  revoked_at: Millis | null;
  /** With the server secret and the id, derives the key's signing secret; null: none yet. */
  signing_nonce: string | null;
}

export interface CaptureJobsTable {
  id: string;
  user_id: number;
  key_id: number | null;
  status: string;
  /** The capture request as JSON (its body, less async and webhook_url). */
  input: string;
  webhook_url: string | null;
  /** The quota unit the job holds: month and day keys, and the count when it was taken. */
  period: string;
  day: string;
  quota_used: number;
  quota_limit: number;
  attempts: Generated<number>;
  lease_owner: string | null;
  lease_expires_at: Millis | null;
  /** The capture's answer fields as JSON, once succeeded. */
  result: string | null;
  error: string | null;
  error_code: string | null;
  created_at: Millis;
  updated_at: Millis;
  finished_at: Millis | null;
  /** The batch the job belongs to (docs/api.md, "Batches"); null for a single capture. */
  batch_id: string | null;
  /** Its place in the batch's `requests`. */
  batch_index: number | null;
  /** The monitor run it carries (docs/api.md, "Monitors"); null for a capture of the API. */
  monitor_run_id: string | null;
}

/** A batch of async captures: its jobs' ends counted as they are written. */
export interface CaptureBatchesTable {
  id: string;
  user_id: number;
  webhook_url: string | null;
  total: number;
  succeeded: Generated<number>;
  failed: Generated<number>;
  created_at: Millis;
  /** Set once, by the transaction that finished the batch's last job. */
  completed_at: Millis | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  user_id: number;
  job_id: string;
  url: string;
  event_type: string;
  payload: string;
  status: string;
  attempts: Generated<number>;
  next_attempt_at: Millis | null;
  lease_owner: string | null;
  lease_expires_at: Millis | null;
  last_status: number | null;
  last_error: string | null;
  created_at: Millis;
  updated_at: Millis;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempted_at: Millis;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** The server secret when SERVER_SECRET is not set (docs/security.md, "Signing secrets"). */
export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: Millis;
}

export interface UsageMonthsTable {
  user_id: number;
  period: string;
  used: number;
}

/** A unit reserved for a capture in flight (migrations/0008-quota-holds.ts). */
export interface QuotaHoldsTable {
  id: Generated<number>;
  user_id: number;
  period: string;
  day: string | null;
  expires_at: Millis;
}

export interface UsageDaysTable {
  user_id: number;
  day: string;
  count: number;
}

export interface ScreenshotsTable {
  id: Generated<number>;
  user_id: number | null;
  token: string;
  ext: string;
  url: string;
  format: string;
  width: number;
  height: number;
  viewport_width: number;
  viewport_height: number;
  full_page: Flag;
  quality: number;
  device_scale_factor: number;
  truncated: Flag;
  listable: Flag;
  cache_key: string | null;
  target_status: number | null;
  /** PageMetadata as JSON; null without `metadata`. */
  metadata: string | null;
  /** CaptureWarning[] as JSON; null on records made before warnings existed (none). */
  warnings: string | null;
  /** StoredContent as JSON (`content`); null without it. */
  content: string | null;
  created_at: Millis;
  expires_at: Millis;
}

export interface BillingAccountsTable {
  user_id: number;
  provider: string;
  customer_id: string;
  subscription_id: string | null;
  status: string;
  renews_at: Millis | null;
  cancel_at_period_end: Flag;
  state_at: Millis | null;
  updated_at: Millis;
}

export interface BillingEventsTable {
  id: string;
  type: string;
  user_id: number | null;
  received_at: Millis;
}

export interface LocalBillingSessionsTable {
  id: string;
  kind: string;
  user_id: number;
  customer_id: string;
  status: string;
  success_url: string;
  cancel_url: string | null;
  subscription_id: string | null;
  created_at: Millis;
  expires_at: Millis;
}

export interface LocalBillingSubscriptionsTable {
  id: string;
  user_id: number;
  customer_id: string;
  status: string;
  current_period_start: Millis;
  current_period_end: Millis;
  cancel_at_period_end: Flag;
  created_at: Millis;
  updated_at: Millis;
}

export interface WindowCountersTable {
  key: string;
  points: number;
  expires_at: Millis;
}

export interface MonitorsTable {
  seq: Generated<number>;
  id: string;
  user_id: number;
  name: string | null;
  /** The capture input (target, options, ignore_selectors as hide_selectors) as JSON. */
  input: string;
  every: string;
  threshold: number;
  /** string[] as JSON. */
  ignore_selectors: string;
  webhook_url: string | null;
  status: string;
  next_run_at: Millis;
  created_at: Millis;
  last_run_at: Millis | null;
  last_change_at: Millis | null;
  baseline_id: number | null;
  failures: Generated<number>;
  failed_event_at: Millis | null;
}

export interface StorageDestinationsTable {
  seq: Generated<number>;
  id: string;
  user_id: number;
  name: string;
  endpoint: string | null;
  region: string;
  bucket: string;
  prefix: string;
  access_key_id: string;
  /** The secret access key, sealed (AES-256-GCM, the id as associated data). */
  secret_sealed: string;
  path_style: Flag;
  acl: string;
  created_at: Millis;
  tested_at: Millis;
}

export interface MonitorRunsTable {
  seq: Generated<number>;
  id: string;
  monitor_id: string;
  at: Millis;
  status: string;
  changed: Flag | null;
  changed_fraction: number | null;
  image_url: string | null;
  diff_url: string | null;
  error: string | null;
  screenshot_id: number | null;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  usage_months: UsageMonthsTable;
  usage_days: UsageDaysTable;
  quota_holds: QuotaHoldsTable;
  screenshots: ScreenshotsTable;
  billing_accounts: BillingAccountsTable;
  billing_events: BillingEventsTable;
  local_billing_sessions: LocalBillingSessionsTable;
  local_billing_subscriptions: LocalBillingSubscriptionsTable;
  window_counters: WindowCountersTable;
  server_secrets: ServerSecretsTable;
  capture_jobs: CaptureJobsTable;
  capture_batches: CaptureBatchesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  monitors: MonitorsTable;
  monitor_runs: MonitorRunsTable;
  storage_destinations: StorageDestinationsTable;
}

export type { Flag, Millis };
