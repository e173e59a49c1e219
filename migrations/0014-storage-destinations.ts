import type { Kysely } from 'kysely';
import { type Dialect, flag, millis, notNull, ref } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // An account's own buckets (docs/destinations.md). `secret_sealed` is the secret access key
  // under AES-256-GCM with the destination's id as associated data; it is never answered.
  // `seq` orders the listing; the public id is `dst_...`.
  await db.schema
    .createTable('storage_destinations')
    .addColumn('seq', dialect === 'postgres' ? 'bigint' : 'integer', (c) =>
      dialect === 'postgres'
        ? c.primaryKey().generatedAlwaysAsIdentity()
        : c.primaryKey().autoIncrement(),
    )
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', notNull)
    .addColumn('endpoint', 'text')
    .addColumn('region', 'text', notNull)
    .addColumn('bucket', 'text', notNull)
    .addColumn('prefix', 'text', notNull)
    .addColumn('access_key_id', 'text', notNull)
    .addColumn('secret_sealed', 'text', notNull)
    .addColumn('path_style', flag(dialect), notNull)
    .addColumn('acl', 'text', notNull)
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('tested_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('storage_destinations_user_idx')
    .on('storage_destinations')
    .columns(['user_id', 'seq'])
    .execute();
}
