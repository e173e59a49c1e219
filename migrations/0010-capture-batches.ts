import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull, ref } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Batches of async captures (docs/api.md, "Batches"). Each request is an ordinary row of
  // capture_jobs that names its batch; the batch's row counts its jobs' ends as they are
  // written (in the job's own finishing transaction), and `completed_at` is set once, by the
  // transaction that counts the last one, which also writes the batch.completed delivery.
  await db.schema
    .createTable('capture_batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('webhook_url', 'text')
    .addColumn('total', 'integer', notNull)
    .addColumn('succeeded', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('completed_at', millis(dialect))
    .execute();
  await db.schema
    .createIndex('capture_batches_completed_idx')
    .on('capture_batches')
    .column('completed_at')
    .execute();
  // No foreign key: a batch and its jobs are pruned by the same sweep, in either order.
  await db.schema.alterTable('capture_jobs').addColumn('batch_id', 'text').execute();
  // The job's place in the batch's `requests`, the order GET lists them in.
  await db.schema.alterTable('capture_jobs').addColumn('batch_index', 'integer').execute();
  await db.schema
    .createIndex('capture_jobs_batch_idx')
    .on('capture_jobs')
    .columns(['batch_id', 'batch_index'])
    .execute();
}
