import type { Kysely, Selectable } from 'kysely';
import type { BatchStore, CaptureBatch } from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { newJobRow, openJobs, toJob } from './job-store.ts';
import { lockUser } from './row-locks.ts';
import type { CaptureBatchesTable, Database } from './schema.ts';

const toBatch = (row: Selectable<CaptureBatchesTable>): CaptureBatch => ({
  id: row.id,
  userId: Number(row.user_id),
  webhookUrl: row.webhook_url,
  total: Number(row.total),
  succeeded: Number(row.succeeded),
  failed: Number(row.failed),
  createdAt: Number(row.created_at),
  completedAt: row.completed_at === null ? null : Number(row.completed_at),
});

/**
 * Batches of async captures (docs/api.md, "Batches"): the batch's row and its jobs, written
 * together. Their ends are counted by the jobs' finishing transaction (job-store.ts).
 */
export function batchStore(db: Kysely<Database>, dialect: DialectName): BatchStore {
  return {
    async create(batch, jobs, maxOpen) {
      // Inside the store's transaction (enqueue-batch.ts keeps the units' holds in the same
      // one) it runs there: Kysely does not nest transactions.
      const inTransaction = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
        db.isTransaction ? fn(db) : db.transaction().execute(fn);
      return inTransaction(async (trx) => {
        // Serialise the count per account, as a single job's does.
        await lockUser(trx, dialect, batch.userId);
        const open = await openJobs(trx, batch.userId);
        if (open + jobs.length > maxOpen) return 'limit_reached' as const;
        await trx
          .insertInto('capture_batches')
          .values({
            id: batch.id,
            user_id: batch.userId,
            webhook_url: batch.webhookUrl,
            total: jobs.length,
            created_at: batch.createdAt,
          })
          .execute();
        const rows = await trx
          .insertInto('capture_jobs')
          .values(jobs.map((job, index) => newJobRow(job, { id: batch.id, index })))
          .returningAll()
          .execute();
        const byId = new Map(rows.map((r) => [r.id, toJob(r)]));
        // In the request's order, whatever order the database returned the rows in.
        return jobs.map((job) => byId.get(job.id) as ReturnType<typeof toJob>);
      });
    },

    async get(userId, id) {
      const row = await db
        .selectFrom('capture_batches')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (!row) return null;
      const jobs = await db
        .selectFrom('capture_jobs')
        .selectAll()
        .where('batch_id', '=', id)
        .where('user_id', '=', userId)
        .orderBy('batch_index')
        .execute();
      return { batch: toBatch(row), jobs: jobs.map(toJob) };
    },

    async prune(before) {
      const res = await db
        .deleteFrom('capture_batches')
        .where('completed_at', '<', before)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
