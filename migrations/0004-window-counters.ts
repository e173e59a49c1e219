import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Fixed-window counters (per-minute rates, the demo's daily allowance, login throttling)
  // when several nodes share PostgreSQL without Redis: one row per counter key and window.
  await db.schema
    .createTable('window_counters')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('points', 'integer', notNull)
    .addColumn('expires_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('window_counters_expiry_idx')
    .on('window_counters')
    .column('expires_at')
    .execute();
}
