import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull, ref } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Async captures (docs/api.md, "Async captures"). The row is the job's truth on every
  // engine: its status, its lease (who runs it, until when), the quota unit it holds
  // (period, day) and its result. BullMQ, when used, only carries "run job X" to a worker.
  await db.schema
    .createTable('capture_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('key_id', ref(dialect))
    .addColumn('status', 'text', notNull)
    .addColumn('input', 'text', notNull)
    .addColumn('webhook_url', 'text')
    .addColumn('period', 'text', notNull)
    .addColumn('day', 'text', notNull)
    .addColumn('quota_used', 'integer', notNull)
    .addColumn('quota_limit', 'integer', notNull)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', millis(dialect))
    .addColumn('result', 'text')
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('updated_at', millis(dialect), notNull)
    .addColumn('finished_at', millis(dialect))
    .execute();
  await db.schema
    .createIndex('capture_jobs_runnable_idx')
    .on('capture_jobs')
    .columns(['status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('capture_jobs_user_idx')
    .on('capture_jobs')
    .columns(['user_id', 'status'])
    .execute();

  // Webhook deliveries, one per finished job with a webhook_url, written in the same
  // transaction as the job's last status (an outbox): the id is the `webhook-id` of every
  // attempt, the payload the exact body.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('job_id', 'text', notNull)
    .addColumn('url', 'text', notNull)
    .addColumn('event_type', 'text', notNull)
    .addColumn('payload', 'text', notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', millis(dialect))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', millis(dialect))
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('updated_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_user_idx')
    .on('webhook_deliveries')
    .columns(['user_id', 'created_at'])
    .execute();
  // Every attempt, for the dashboard.
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (c) =>
      c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
    )
    .addColumn('attempted_at', millis(dialect), notNull)
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', notNull)
    .execute();
  await db.schema
    .createIndex('webhook_attempts_delivery_idx')
    .on('webhook_attempts')
    .columns(['delivery_id', 'attempted_at'])
    .execute();

  // The account's webhook secret is derived like a key's signing secret (server secret,
  // account id, this nonce); null until first shown or used.
  await db.schema.alterTable('users').addColumn('webhook_nonce', 'text').execute();
}
