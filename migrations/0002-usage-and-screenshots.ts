import type { Kysely } from 'kysely';
import { type Dialect, flag, millis, notNull, ref, withId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // One row per account and calendar month (UTC, `YYYY-MM`): the monthly quota counter.
  await db.schema
    .createTable('usage_months')
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('period', 'text', notNull)
    .addColumn('used', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_months_pk', ['user_id', 'period'])
    .execute();

  // Successful captures per account and UTC day (`YYYY-MM-DD`), for the usage chart.
  await db.schema
    .createTable('usage_days')
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('day', 'text', notNull)
    .addColumn('count', 'integer', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('usage_days_pk', ['user_id', 'day'])
    .execute();

  await withId(db.schema.createTable('screenshots'), dialect)
    // Null for demo captures.
    .addColumn('user_id', ref(dialect), (c) => c.references('users.id').onDelete('cascade'))
    .addColumn('token', 'text', (c) => c.notNull().unique())
    .addColumn('ext', 'text', notNull)
    .addColumn('url', 'text', notNull)
    .addColumn('format', 'text', notNull)
    .addColumn('width', 'integer', notNull)
    .addColumn('height', 'integer', notNull)
    .addColumn('viewport_width', 'integer', notNull)
    .addColumn('viewport_height', 'integer', notNull)
    .addColumn('full_page', flag(dialect), notNull)
    .addColumn('quality', 'integer', notNull)
    .addColumn('device_scale_factor', dialect === 'postgres' ? 'double precision' : 'real', notNull)
    .addColumn('truncated', flag(dialect), notNull)
    .addColumn('listable', flag(dialect), notNull)
    .addColumn('cache_key', 'text')
    .addColumn('target_status', 'integer')
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('expires_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('screenshots_user_idx')
    .on('screenshots')
    .columns(['user_id', 'id'])
    .execute();
  await db.schema
    .createIndex('screenshots_cache_idx')
    .on('screenshots')
    .columns(['cache_key', 'created_at'])
    .execute();
  await db.schema
    .createIndex('screenshots_expiry_idx')
    .on('screenshots')
    .column('expires_at')
    .execute();
}
