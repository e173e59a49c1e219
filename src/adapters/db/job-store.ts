import type { ExpressionBuilder, Kysely, Selectable, UpdateObject } from 'kysely';
import type {
  CaptureJob,
  CompletedBatch,
  JobStatus,
  JobStore,
  Lease,
  NewDelivery,
  NewJob,
} from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { lockedRows, lockUser } from './row-locks.ts';
import type { CaptureJobsTable, Database } from './schema.ts';

const json = (text: string | null): Record<string, unknown> | null =>
  text === null ? null : (JSON.parse(text) as Record<string, unknown>);

export const toJob = (row: Selectable<CaptureJobsTable>): CaptureJob => ({
  id: row.id,
  userId: Number(row.user_id),
  keyId: row.key_id === null ? null : Number(row.key_id),
  status: row.status as JobStatus,
  input: json(row.input) ?? {},
  webhookUrl: row.webhook_url,
  period: row.period,
  day: row.day,
  quota: { used: Number(row.quota_used), limit: Number(row.quota_limit) },
  attempts: Number(row.attempts),
  result: json(row.result),
  error: row.error,
  errorCode: row.error_code,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  finishedAt: row.finished_at === null ? null : Number(row.finished_at),
  batchId: row.batch_id,
  monitorRunId: row.monitor_run_id,
});

/** The columns of a queued job's row (a single capture's or a batch's). */
export const newJobRow = (job: NewJob, batch?: { id: string; index: number }) => ({
  id: job.id,
  user_id: job.userId,
  key_id: job.keyId,
  status: 'queued',
  input: JSON.stringify(job.input),
  webhook_url: job.webhookUrl,
  period: job.period,
  day: job.day,
  quota_used: job.quota.used,
  quota_limit: job.quota.limit,
  created_at: job.createdAt,
  updated_at: job.createdAt,
  batch_id: batch?.id ?? null,
  batch_index: batch?.index ?? null,
  monitor_run_id: job.monitorRunId ?? null,
});

async function insertJob(db: Kysely<Database>, job: NewJob): Promise<CaptureJob> {
  const row = await db
    .insertInto('capture_jobs')
    .values(newJobRow(job))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toJob(row);
}

/**
 * The account's jobs queued or rendering, what max_queued_jobs bounds. A monitor's runs are
 * bounded by max_monitors instead, and do not count.
 */
export async function openJobs(db: Kysely<Database>, userId: number): Promise<number> {
  const { n } = await db
    .selectFrom('capture_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('status', 'in', ['queued', 'rendering'])
    .where('monitor_run_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * Async capture jobs in the database: the durable queue of the embedded mode and of
 * PostgreSQL without Redis, and the job's truth with every engine (docs/deployment.md,
 * "Async captures"). A worker takes a job by writing its lease in one statement; on
 * PostgreSQL the candidate row is locked with SKIP LOCKED, so concurrent workers on any
 * number of nodes each take a different job; SQLite is one writer by construction.
 */
export function jobStore(db: Kysely<Database>, dialect: DialectName): JobStore {
  return {
    ...jobRecords(db, dialect),
    claim: (take) => claimJob(db, dialect, take),
    ...leaseWrites(db),
    ...jobSweeps(db),
  };
}

/** Jobs queued and read. */
function jobRecords(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<JobStore, 'createWithinLimit' | 'create' | 'get' | 'status'> {
  return {
    async createWithinLimit(job, maxOpen) {
      // Inside the store's transaction (enqueue-capture.ts moves the unit's hold to the job
      // in the same one) it runs there: Kysely does not nest transactions.
      const inTransaction = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
        db.isTransaction ? fn(db) : db.transaction().execute(fn);
      return inTransaction(async (trx) => {
        // Serialise the count per account.
        await lockUser(trx, dialect, job.userId);
        if ((await openJobs(trx, job.userId)) >= maxOpen) return 'limit_reached' as const;
        return insertJob(trx, job);
      });
    },

    create(job) {
      return insertJob(db, job);
    },

    async get(userId, id) {
      const row = await db
        .selectFrom('capture_jobs')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row ? toJob(row) : null;
    },

    async status(id) {
      const row = await db
        .selectFrom('capture_jobs')
        .select('status')
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? (row.status as JobStatus) : null;
    },
  };
}

/** Takes a runnable job for a worker (JobStore.claim). */
async function claimJob(
  db: Kysely<Database>,
  dialect: DialectName,
  { owner, now, leaseMs, id }: Parameters<JobStore['claim']>[0],
): Promise<CaptureJob | null> {
  let candidate = db
    .selectFrom('capture_jobs as c')
    .select('c.id')
    // A queued row's lease_expires_at is when a requeued job may run again (null: now).
    .where((eb) =>
      eb.or([
        eb.and([
          eb('c.status', '=', 'queued'),
          eb.or([eb('c.lease_expires_at', 'is', null), eb('c.lease_expires_at', '<=', now)]),
        ]),
        eb.and([eb('c.status', '=', 'rendering'), eb('c.lease_expires_at', '<', now)]),
      ]),
    )
    // Accounts take turns: the job of the account with the fewest jobs rendering now goes
    // first, so one account's backlog of queued jobs does not hold every worker.
    .orderBy((eb) =>
      eb
        .selectFrom('capture_jobs as r')
        .select((r) => r.fn.countAll().as('n'))
        .whereRef('r.user_id', '=', 'c.user_id')
        .where('r.status', '=', 'rendering')
        .where('r.lease_expires_at', '>=', now),
    )
    .orderBy('c.created_at')
    .limit(1);
  if (id !== undefined) candidate = candidate.where('c.id', '=', id);
  candidate = lockedRows(candidate, dialect, 'skip');
  const row = await db
    .updateTable('capture_jobs')
    .set((eb) => ({
      status: 'rendering',
      lease_owner: owner,
      lease_expires_at: now + leaseMs,
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    }))
    .where('id', '=', candidate)
    .returningAll()
    .executeTakeFirst();
  return row ? toJob(row) : null;
}

/** What the worker holding a job writes: its lease renewed, its end, its way back to the queue. */
function leaseWrites(
  db: Kysely<Database>,
): Pick<JobStore, 'renew' | 'finish' | 'requeue' | 'release'> {
  return {
    renew: (lease, until) => whileHeld(db, lease, { lease_expires_at: until }),

    async finish(lease, { now, outcome, delivery, batchCompleted }) {
      return db.transaction().execute(async (trx) => {
        const finished = await whileHeld(trx, lease, {
          status: outcome.status,
          // The request is not kept past the job: it may carry the caller's headers,
          // cookies and credentials for the target.
          input: '{}',
          result: outcome.status === 'succeeded' ? JSON.stringify(outcome.result) : null,
          error: outcome.status === 'failed' ? outcome.error : null,
          error_code: outcome.status === 'failed' ? outcome.code : null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
          finished_at: now,
        });
        if (!finished) return false;
        if (delivery) await insertDelivery(trx, delivery, now);
        if (batchCompleted) {
          const completed = await countInBatch(trx, lease.id, outcome.status, now);
          const last = completed ? batchCompleted(completed) : null;
          if (last) await insertDelivery(trx, last, now);
        }
        return true;
      });
    },

    requeue: (lease, { now, availableAt }) =>
      whileHeld(db, lease, {
        status: 'queued',
        lease_owner: null,
        lease_expires_at: availableAt,
        updated_at: now,
      }),

    release: (lease, { now, ran }) =>
      whileHeld(db, lease, (eb) => ({
        status: 'queued',
        lease_owner: null,
        lease_expires_at: null,
        ...(ran ? {} : { attempts: eb('attempts', '-', 1) }),
        updated_at: now,
      })),
  };
}

/** Old jobs pruned, and jobs whose dispatch was lost found again. */
function jobSweeps(db: Kysely<Database>): Pick<JobStore, 'prune' | 'stranded'> {
  return {
    async prune(before) {
      const res = await db
        .deleteFrom('capture_jobs')
        .where('status', 'in', ['succeeded', 'failed'])
        .where('finished_at', '<', before)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    async stranded(now, before, limit) {
      const rows = await db
        .selectFrom('capture_jobs')
        .select('id')
        .where('status', 'in', ['queued', 'rendering'])
        .where((eb) =>
          eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]),
        )
        .where('updated_at', '<', before)
        .orderBy('created_at')
        .limit(limit)
        .execute();
      return rows.map((r) => r.id);
    },
  };
}

/** A delivery, due now: written in the transaction of the status it reports. */
export async function insertDelivery(db: Kysely<Database>, delivery: NewDelivery, now: number) {
  await db
    .insertInto('webhook_deliveries')
    .values({
      id: delivery.id,
      user_id: delivery.userId,
      job_id: delivery.jobId,
      url: delivery.url,
      event_type: delivery.eventType,
      payload: delivery.payload,
      status: 'pending',
      next_attempt_at: now,
      created_at: now,
      updated_at: now,
    })
    .execute();
}

/**
 * Counts job `id`'s end in its batch, inside the job's finishing transaction (which only the
 * worker holding the job gets to commit, so each job counts once). The increment is one
 * statement, so concurrent ends on other nodes each add theirs (PostgreSQL makes the second
 * writer wait for the first's row and read it again); the batch completes in the statement
 * that sets `completed_at` while it is still null, which exactly one transaction does.
 * The completed batch, or null when jobs remain (or the job has no batch).
 */
async function countInBatch(
  db: Kysely<Database>,
  id: string,
  status: 'succeeded' | 'failed',
  now: number,
): Promise<CompletedBatch | null> {
  const batchId = db.selectFrom('capture_jobs').select('batch_id').where('id', '=', id);
  const counted = await db
    .updateTable('capture_batches')
    .set((eb) =>
      status === 'succeeded'
        ? { succeeded: eb('succeeded', '+', 1) }
        : { failed: eb('failed', '+', 1) },
    )
    .where('id', '=', batchId)
    .returning(['id', 'total', 'succeeded', 'failed'])
    .executeTakeFirst();
  if (!counted || Number(counted.succeeded) + Number(counted.failed) < Number(counted.total)) {
    return null;
  }
  const row = await db
    .updateTable('capture_batches')
    .set({ completed_at: now })
    .where('id', '=', counted.id)
    .where('completed_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (!row) return null;
  return {
    id: row.id,
    userId: Number(row.user_id),
    webhookUrl: row.webhook_url,
    succeeded: Number(row.succeeded),
    failed: Number(row.failed),
    completedAt: now,
  };
}

/** A change to a job's row, as Kysely's `set` takes it. */
type JobUpdate =
  | UpdateObject<Database, 'capture_jobs'>
  | ((eb: ExpressionBuilder<Database, 'capture_jobs'>) => UpdateObject<Database, 'capture_jobs'>);

/**
 * Writes `update` to the lease's job only while its owner holds it rendering: a worker whose lease ran
 * out and was taken over changes nothing. Whether it wrote.
 */
async function whileHeld(
  db: Kysely<Database>,
  { id, owner }: Lease,
  update: JobUpdate,
): Promise<boolean> {
  const res = await db
    .updateTable('capture_jobs')
    .set(update)
    .where('id', '=', id)
    .where('status', '=', 'rendering')
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
