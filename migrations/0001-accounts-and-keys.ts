import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull, ref, withId } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await withId(db.schema.createTable('users'), dialect)
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('plan', 'text', (c) => c.notNull().defaultTo('free'))
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('updated_at', millis(dialect), notNull)
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('expires_at', millis(dialect), notNull)
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();

  await withId(db.schema.createTable('api_keys'), dialect)
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('name', 'text', notNull)
    .addColumn('prefix', 'text', notNull)
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('last_used_at', millis(dialect))
    .addColumn('revoked_at', millis(dialect))
    .execute();
  await db.schema
    .createIndex('api_keys_user_idx')
    .on('api_keys')
    .columns(['user_id', 'revoked_at'])
    .execute();
}
