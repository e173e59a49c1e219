/**
 * Async capture jobs, their batches and webhook deliveries: taken by lease, ended once. A port of
 * the domain (the Kysely adapters in adapters/db serve SQLite and PostgreSQL); ../store.ts
 * composes the ports into the Store and re-exports their types.
 */
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

/** A job or a webhook delivery as the worker holding it names it: its id, the lease's owner. */
export interface Lease {
  id: string;
  owner: string;
}

/** A job's last status. */
export type JobOutcome =
  | { status: 'succeeded'; result: Record<string, unknown> }
  | { status: 'failed'; error: string; code: string };

/** What a finished job writes with its status, in the same transaction. */
export interface JobEnd {
  now: number;
  outcome: JobOutcome;
  /** Its webhook event, if it has a webhook. */
  delivery: NewDelivery | null;
  /**
   * For a job of a batch: called in the same transaction when this end was the batch's
   * last (exactly once per batch, whichever node writes it); its delivery is written there.
   */
  batchCompleted?: ((batch: CompletedBatch) => NewDelivery | null) | undefined;
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
   * job waits until its time), or rendering under a lease that ran out (its node died).
   * `id`: that job only (a queue engine named it); else the oldest. Each job is taken by one
   * worker at a time (SKIP LOCKED on PostgreSQL).
   */
  claim(take: {
    owner: string;
    now: number;
    leaseMs: number;
    id?: string | undefined;
  }): Promise<CaptureJob | null>;
  /** Extends the lease to `until`; false when its owner no longer holds it. */
  renew(lease: Lease, until: number): Promise<boolean>;
  /**
   * The job's last status, once: only while the lease's owner holds it rendering. With the
   * webhook delivery (if any) in the same transaction. False: someone else has it now.
   */
  finish(lease: Lease, end: JobEnd): Promise<boolean>;
  /**
   * Back to the queue after an attempt that may succeed later (a retryable failure), to be
   * taken again from `availableAt`; only while the lease's owner holds it rendering.
   */
  requeue(lease: Lease, at: { now: number; availableAt: number }): Promise<boolean>;
  /**
   * Back to the queue at once, for any node (this one is stopping); only while the lease's
   * owner holds it rendering. `ran`: false when it never started here, so the take is not
   * counted as an attempt.
   */
  release(lease: Lease, at: { now: number; ran: boolean }): Promise<boolean>;
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
  claimDue(take: {
    owner: string;
    now: number;
    leaseMs: number;
    limit: number;
    perAccount: number;
  }): Promise<WebhookDelivery[]>;
  /**
   * Records an attempt and what follows it (pending again at `nextAttemptAt`, or a last
   * status), only while the lease's owner holds the delivery.
   */
  recordAttempt(
    lease: Lease,
    attempt: WebhookAttempt,
    next: { status: DeliveryStatus; nextAttemptAt: number | null },
  ): Promise<boolean>;
  /** Lets go of a delivery the lease's owner holds, unsent, for any node to take at once. */
  release(lease: Lease): Promise<boolean>;
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
    at: { now: number; maxPending: number },
  ): Promise<'queued' | 'not_found' | 'busy' | 'too_many'>;
  /** Deletes finished deliveries (and their attempts) last touched before `before`. */
  prune(before: number): Promise<number>;
}
