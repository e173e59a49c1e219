import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

const ROW = 'server-secret';

/**
 * The server secret signing secrets are derived from: SERVER_SECRET when set, else one made
 * at random by the first node to start and kept in the database, so every node of a
 * deployment agrees without configuration. The database copy means a database dump alone
 * is enough to recreate every signing secret; with NODE_ENV=production SERVER_SECRET is
 * required (the boot stops without it: docs/deployment.md, "Secrets").
 */
export async function loadServerSecret(
  db: Kysely<Database>,
  configured: string | undefined,
  now: number,
): Promise<{ secret: string; source: 'environment' | 'database' }> {
  if (configured !== undefined) return { secret: configured, source: 'environment' };
  await db
    .insertInto('server_secrets')
    .values({ name: ROW, value: randomBytes(32).toString('base64url'), created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db
    .selectFrom('server_secrets')
    .select('value')
    .where('name', '=', ROW)
    .executeTakeFirstOrThrow();
  return { secret: row.value, source: 'database' };
}
