import type { Kysely } from 'kysely';
import { type Dialect, flag, millis, notNull, ref } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const fraction = dialect === 'postgres' ? 'double precision' : 'real';
  // Monitors (docs/api.md, "Monitors"). `seq` orders the listing and its cursor; the public
  // id is `mon_...`. `next_run_at` is the due time a scheduler claims by moving it forward in
  // one UPDATE (one node per slot); `baseline_id` is the record a run is compared with, whose
  // expiry is lifted while it is the baseline.
  await db.schema
    .createTable('monitors')
    .addColumn('seq', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
      dialect === 'postgres'
        ? c.primaryKey().generatedAlwaysAsIdentity()
        : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('name', 'text')
    .addColumn('input', 'text', notNull)
    .addColumn('every', 'text', notNull)
    .addColumn('threshold', fraction, notNull)
    .addColumn('ignore_selectors', 'text', notNull)
    .addColumn('webhook_url', 'text')
    .addColumn('status', 'text', notNull)
    .addColumn('next_run_at', millis(dialect), notNull)
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('last_run_at', millis(dialect))
    .addColumn('last_change_at', millis(dialect))
    .addColumn('baseline_id', ref(dialect))
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_event_at', millis(dialect))
    .execute();
  await db.schema.createIndex('monitors_due_idx').on('monitors').column('next_run_at').execute();
  await db.schema
    .createIndex('monitors_user_idx')
    .on('monitors')
    .columns(['user_id', 'seq'])
    .execute();
  await db.schema
    .createTable('monitor_runs')
    .addColumn('seq', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
      dialect === 'postgres'
        ? c.primaryKey().generatedAlwaysAsIdentity()
        : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('monitor_id', 'text', (c) =>
      c.notNull().references('monitors.id').onDelete('cascade'),
    )
    .addColumn('at', millis(dialect), notNull)
    .addColumn('status', 'text', notNull)
    .addColumn('changed', flag(dialect))
    .addColumn('changed_fraction', fraction)
    .addColumn('image_url', 'text')
    .addColumn('diff_url', 'text')
    .addColumn('error', 'text')
    .addColumn('screenshot_id', ref(dialect))
    .execute();
  await db.schema
    .createIndex('monitor_runs_monitor_idx')
    .on('monitor_runs')
    .columns(['monitor_id', 'seq'])
    .execute();
}
