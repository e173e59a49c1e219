import type { BillingState, SubscriptionStatus } from './billing/subscription-state.ts';
import type { ContentKind } from './captures/formats.ts';
import type { PageMetadata } from './captures/renderer.ts';
import type { CaptureWarning } from './captures/warnings.ts';
import type { MonitorStore } from './monitors/store.ts';
import type { PlanName } from './plans.ts';

/**
 * What the domain needs from persistence. The Kysely implementation in adapters/db serves
 * both SQLite and PostgreSQL; the domain never sees SQL.
 */
export interface User {
  id: number;
  email: string;
  plan: PlanName;
  createdAt: number;
}

export interface ApiKeyRecord {
  id: number;
  userId: number;
  name: string;
  prefix: string;
  createdAt: number;
  lastUsedAt: number | null;
}

export interface UserStore {
  /** 'email_taken' when another account has the (normalised) email. */
  create(input: {
    email: string;
    passwordHash: string | null;
    plan: PlanName;
    now: number;
  }): Promise<User | 'email_taken'>;
  findByEmail(email: string): Promise<{ user: User; passwordHash: string | null } | null>;
  findById(id: number): Promise<User | null>;
  setPlan(id: number, plan: PlanName, now: number): Promise<boolean>;
  /** The account's webhook nonce, made now (first come wins) if it has none. */
  webhookNonce(id: number, fresh: string): Promise<string>;
  /** Replaces the account's webhook nonce (a rotated webhook secret). */
  setWebhookNonce(id: number, nonce: string): Promise<void>;
}

export interface SessionStore {
  create(input: { idHash: string; userId: number; now: number; expiresAt: number }): Promise<void>;
  /** The session's user, or null when the session is unknown or expired. */
  findUser(idHash: string, now: number): Promise<User | null>;
  delete(idHash: string): Promise<void>;
  deleteExpired(now: number): Promise<number>;
}

export interface KeyStore {
  /** Inserts unless the account already has `maxActive` unrevoked keys. */
  createWithinLimit(input: {
    userId: number;
    name: string;
    prefix: string;
    keyHash: string;
    /** Derives the key's signing secret with the server secret (keys/signing-secret.ts). */
    signingNonce: string;
    now: number;
    maxActive: number;
  }): Promise<ApiKeyRecord | 'limit_reached'>;
  listActive(userId: number): Promise<ApiKeyRecord[]>;
  /** true when an active key of this account was revoked now. */
  revoke(userId: number, keyId: number, now: number): Promise<boolean>;
  findActiveByHash(
    keyHash: string,
  ): Promise<{ key: ApiKeyRecord; keyHash: string; user: User } | null>;
  /** An unrevoked key by id, for signed links: its account and signing nonce (null: none). */
  findActiveById(
    keyId: number,
  ): Promise<{ key: ApiKeyRecord; signingNonce: string | null; user: User } | null>;
  /** Replaces an active key's signing nonce; false when the account has no such key. */
  setSigningNonce(userId: number, keyId: number, nonce: string): Promise<boolean>;
  isActive(keyId: number): Promise<boolean>;
  /** Sets last_used_at unless it was written less than `minIntervalMs` ago. */
  touch(keyId: number, now: number, minIntervalMs: number): Promise<void>;
}

export interface QuotaStore {
  /**
   * Atomically takes one unit of the account's monthly quota if fewer than `limit` were
   * used, and counts it in `day`'s captures (the usage chart) in the same write: the new
   * count, or null when the quota is exhausted (nothing is counted then). Exact under any
   * concurrency on either database, however the adapter groups concurrent reservations.
   */
  reserve(userId: number, period: string, limit: number, day?: string): Promise<number | null>;
  /**
   * The same, with a hold on the unit until `until` written in the same write (a capture
   * about to render): a hold neither kept, released nor renewed by then is given back by
   * `returnExpired` (its node died). Null when the quota is exhausted.
   */
  reserveHeld(
    userId: number,
    period: string,
    limit: number,
    day: string | undefined,
    until: number,
  ): Promise<{ used: number; hold: number } | null>;
  /** Gives a reserved unit back (the capture failed), out of `day`'s count too. */
  release(userId: number, period: string, day?: string): Promise<void>;
  /** Gives a held unit back, once: only if its hold still exists (not kept, not swept). */
  releaseHeld(hold: number): Promise<void>;
  /** The capture delivered: its unit is kept for good. False when the hold was swept. */
  keep(hold: number): Promise<boolean>;
  /** Extends live holds (this node's captures in flight) to `until`. */
  renew(holds: readonly number[], until: number): Promise<void>;
  /** Gives back the units of up to `limit` holds expired at `now`, each once; how many. */
  returnExpired(now: number, limit: number): Promise<number>;
  used(userId: number, period: string): Promise<number>;
  days(
    userId: number,
    fromDay: string,
    toDay: string,
  ): Promise<Array<{ day: string; count: number }>>;
}

/** An account's link to the payment provider and its subscription as last reported. */
export interface BillingAccount {
  userId: number;
  provider: string;
  customerId: string;
  subscriptionId: string | null;
  status: SubscriptionStatus;
  renewsAt: number | null;
  cancelAtPeriodEnd: boolean;
  stateAt: number | null;
}

export interface BillingStore {
  find(userId: number): Promise<BillingAccount | null>;
  /**
   * The same, holding the account for the rest of the transaction so concurrent events for
   * one account apply one after the other (PostgreSQL row lock; SQLite writes are serial).
   */
  findForUpdate(userId: number): Promise<BillingAccount | null>;
  findUserIdByCustomer(customerId: string): Promise<number | null>;
  /**
   * Links the provider's customer to the account unless it already has one with this
   * provider; the customer id in effect afterwards (a concurrent first checkout may win).
   */
  saveCustomer(input: {
    userId: number;
    provider: string;
    customerId: string;
    now: number;
  }): Promise<string>;
  /** Records an event id: false when it was recorded before (the event was applied). */
  recordEvent(input: {
    id: string;
    type: string;
    userId: number | null;
    receivedAt: number;
  }): Promise<boolean>;
  saveState(input: {
    userId: number;
    provider: string;
    customerId: string;
    state: BillingState;
    now: number;
  }): Promise<void>;
  /** Forgets event ids received before `before` (providers stop retrying long before). */
  pruneEvents(before: number): Promise<number>;
}

export type {
  Monitor,
  MonitorInput,
  MonitorRun,
  MonitorRunEnd,
  MonitorStatus,
  MonitorStore,
  NewMonitor,
  RunStatus,
} from './monitors/store.ts';

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
  /** Runs `fn` in one transaction: everything it does through `tx` commits or none of it. */
  transaction<T>(fn: (tx: Store) => Promise<T>): Promise<T>;
}

export interface ScreenshotRecord {
  id: number;
  userId: number | null;
  token: string;
  ext: string;
  url: string;
  format: string;
  /** Pixel dimensions of the stored image. */
  width: number;
  height: number;
  /** The request's viewport, full_page, quality and scale. */
  viewportWidth: number;
  viewportHeight: number;
  fullPage: boolean;
  quality: number;
  deviceScaleFactor: number;
  truncated: boolean;
  /** What may be wrong with the image (captures/warnings.ts); a cache hit answers them too. */
  warnings: CaptureWarning[];
  listable: boolean;
  /** Hash of everything that changes the image, scoped to the account; null = not cacheable. */
  cacheKey: string | null;
  targetStatus: number | null;
  /** What `metadata: true` read from the page; null without it. */
  metadata: PageMetadata | null;
  /** The page's content stored beside the image (`content`); null without it. */
  content: StoredContent | null;
  createdAt: number;
  expiresAt: number;
}

/** Which content files a record has (`${token}.html`, ...), and whether one was cut. */
export interface StoredContent {
  kinds: ContentKind[];
  truncated: boolean;
}

export type NewScreenshot = Omit<ScreenshotRecord, 'id'>;

export interface ScreenshotStore {
  insert(record: NewScreenshot): Promise<ScreenshotRecord>;
  /** The newest unexpired record with this cache key created at or after `since`. */
  findCached(cacheKey: string, since: number, now: number): Promise<ScreenshotRecord | null>;
  /**
   * The same lookup and, read in the same statement, whether API key `keyId` is still
   * unrevoked: a cached answer's key check (docs/security.md, "Revocation") costs no round
   * trip of its own.
   */
  findCachedForKey(
    cacheKey: string,
    since: number,
    now: number,
    keyId: number,
  ): Promise<{ record: ScreenshotRecord | null; keyActive: boolean }>;
  findByToken(token: string): Promise<ScreenshotRecord | null>;
  /** The account's listable, unexpired record with this id. */
  findForUser(userId: number, id: number, now: number): Promise<ScreenshotRecord | null>;
  /** Listable records of the account, newest first, strictly older than the cursor id. */
  listForUser(
    userId: number,
    options: { limit: number; beforeId: number | null; now: number },
  ): Promise<ScreenshotRecord[]>;
  /** Deletes the account's record; the deleted record, or null when it is not theirs. */
  deleteForUser(userId: number, id: number): Promise<ScreenshotRecord | null>;
  /** Claims (deletes) up to `limit` expired records and returns them, each exactly once. */
  claimExpired(now: number, limit: number): Promise<ScreenshotRecord[]>;
  /** Drops the cache key of records with this key so they are never served again. */
  uncache(cacheKey: string): Promise<void>;
  /** Which of these image tokens have a record (the orphan sweep asks). */
  knownTokens(tokens: readonly string[]): Promise<Set<string>>;
}

export type JobStatus = 'queued' | 'rendering' | 'succeeded' | 'failed';

/** An async capture (docs/api.md, "Async captures"). */
export interface CaptureJob {
  id: string;
  userId: number;
  keyId: number | null;
  status: JobStatus;
  /** The capture request (the body less `async` and `webhook_url`). */
  input: Record<string, unknown>;
  webhookUrl: string | null;
  /** The quota unit the job holds. */
  period: string;
  day: string;
  quota: { used: number; limit: number };
  /** How many times a worker took it (more than once: its node died while it ran). */
  attempts: number;
  /** The capture's answer fields, once succeeded. */
  result: Record<string, unknown> | null;
  error: string | null;
  errorCode: string | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** The batch it belongs to (docs/api.md, "Batches"); null for a single capture. */
  batchId: string | null;
  /** The monitor run it carries (docs/api.md, "Monitors"); null for a capture of the API. */
  monitorRunId: string | null;
}

export interface NewDelivery {
  id: string;
  userId: number;
  /** The job the event is about; a batch's id for `batch.completed`. */
  jobId: string;
  url: string;
  eventType: string;
  payload: string;
}

export interface JobStore {
  /** Inserts a queued job unless the account already has `maxOpen` queued or rendering. */
  createWithinLimit(job: NewJob, maxOpen: number): Promise<CaptureJob | 'limit_reached'>;
  /** Inserts a queued job bounded by something else (a monitor's run: one per monitor). */
  create(job: NewJob): Promise<CaptureJob>;
  get(userId: number, id: string): Promise<CaptureJob | null>;
  /** A job's status by id alone (a worker's check; null: no such job). */
  status(id: string): Promise<JobStatus | null>;
  /**
   * Takes a runnable job for `owner` until `now + leaseMs`: queued (and available: a requeued
   * job waits until its time), or rendering under a lease that ran out (its node died). `id`: that job only (a queue engine named it); else the
   * oldest. Each job is taken by one worker at a time (SKIP LOCKED on PostgreSQL).
   */
  claim(owner: string, now: number, leaseMs: number, id?: string): Promise<CaptureJob | null>;
  /** Extends the lease; false when `owner` no longer holds it. */
  renew(id: string, owner: string, until: number): Promise<boolean>;
  /**
   * The job's last status, once: only while `owner` holds it rendering. With the webhook
   * delivery (if any) in the same transaction. False: someone else has it now.
   */
  finish(
    id: string,
    owner: string,
    now: number,
    outcome:
      | { status: 'succeeded'; result: Record<string, unknown> }
      | { status: 'failed'; error: string; code: string },
    delivery: NewDelivery | null,
    /**
     * For a job of a batch: called in the same transaction when this end was the batch's
     * last (exactly once per batch, whichever node writes it); its delivery is written there.
     */
    batchCompleted?: (batch: CompletedBatch) => NewDelivery | null,
  ): Promise<boolean>;
  /**
   * Back to the queue after an attempt that may succeed later (a retryable failure), to be
   * taken again from `availableAt`; only while `owner` holds it rendering.
   */
  requeue(id: string, owner: string, now: number, availableAt: number): Promise<boolean>;
  /**
   * Back to the queue at once, for any node (this one is stopping); only while `owner` holds
   * it rendering. `ran`: false when it never started here, so the take is not counted as an
   * attempt.
   */
  release(id: string, owner: string, now: number, ran: boolean): Promise<boolean>;
  /** Deletes finished jobs that finished before `before`. */
  prune(before: number): Promise<number>;
  /** Jobs not finished and not leased at `now`, last touched before `before` (lost dispatches). */
  stranded(now: number, before: number, limit: number): Promise<string[]>;
}

/** A batch of async captures (docs/api.md, "Batches"). */
export interface CaptureBatch {
  id: string;
  userId: number;
  webhookUrl: string | null;
  total: number;
  /** Its jobs' ends so far. */
  succeeded: number;
  failed: number;
  createdAt: number;
  completedAt: number | null;
}

/** What `batch.completed` says, handed over by the transaction that completed the batch. */
export interface CompletedBatch {
  id: string;
  userId: number;
  webhookUrl: string | null;
  succeeded: number;
  failed: number;
  completedAt: number;
}

/** A job as written when queued (the store fills the rest). */
export type NewJob = Omit<
  CaptureJob,
  | 'status'
  | 'attempts'
  | 'result'
  | 'error'
  | 'errorCode'
  | 'updatedAt'
  | 'finishedAt'
  | 'batchId'
  | 'monitorRunId'
> & { monitorRunId?: string };

export interface BatchStore {
  /**
   * Writes the batch and its queued jobs together, unless the account's queued and rendering
   * jobs and these would pass `maxOpen` (`limit_reached`: nothing written).
   */
  create(
    batch: { id: string; userId: number; webhookUrl: string | null; createdAt: number },
    jobs: readonly NewJob[],
    maxOpen: number,
  ): Promise<CaptureJob[] | 'limit_reached'>;
  /** The account's batch and its jobs, oldest first; null when the account has no such batch. */
  get(userId: number, id: string): Promise<{ batch: CaptureBatch; jobs: CaptureJob[] } | null>;
  /** Deletes batches completed before `before` (their jobs go by the jobs' own sweep). */
  prune(before: number): Promise<number>;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'gone';

export interface WebhookDelivery extends NewDelivery {
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number | null;
  lastStatus: number | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface WebhookAttempt {
  attemptedAt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

export interface WebhookStore {
  /**
   * Takes up to `limit` pending deliveries due at `now` for `owner` until `now + leaseMs`,
   * skipping accounts that already have `perAccount` deliveries being sent.
   */
  claimDue(
    owner: string,
    now: number,
    leaseMs: number,
    limit: number,
    perAccount: number,
  ): Promise<WebhookDelivery[]>;
  /**
   * Records an attempt and what follows it (pending again at `nextAttemptAt`, or a last
   * status), only while `owner` holds the delivery.
   */
  recordAttempt(
    id: string,
    owner: string,
    attempt: WebhookAttempt,
    next: { status: DeliveryStatus; nextAttemptAt: number | null },
  ): Promise<boolean>;
  /** Lets go of a delivery `owner` holds, unsent, for any node to take at once (it stops). */
  release(id: string, owner: string): Promise<boolean>;
  list(userId: number, limit: number): Promise<WebhookDelivery[]>;
  /** The newest `limit` attempts, oldest first; null when the account has no such delivery. */
  attempts(userId: number, id: string, limit: number): Promise<WebhookAttempt[] | null>;
  /**
   * Pending again now, attempts kept, unless it is being sent or waiting to be (`busy`) or
   * the account already has `maxPending` deliveries waiting (`too_many`); `not_found` when
   * the account has no such delivery.
   */
  resend(
    userId: number,
    id: string,
    now: number,
    maxPending: number,
  ): Promise<'queued' | 'not_found' | 'busy' | 'too_many'>;
  /** Deletes finished deliveries (and their attempts) last touched before `before`. */
  prune(before: number): Promise<number>;
}
