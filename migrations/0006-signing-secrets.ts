import type { Kysely } from 'kysely';
import { type Dialect, millis, notNull } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // A key's signing secret is derived from the server secret, the key's id and this nonce
  // (docs/security.md, "Signing secrets"); a new nonce replaces the secret. Null: none yet
  // (keys made before signed links), so no link of that key is accepted until one is made.
  await db.schema.alterTable('api_keys').addColumn('signing_nonce', 'text').execute();
  // The server secret when SERVER_SECRET is not set: made once, by whichever node starts
  // first, and read by all.
  await db.schema
    .createTable('server_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', notNull)
    .addColumn('created_at', millis(dialect), notNull)
    .execute();
}
