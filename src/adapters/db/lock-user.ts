import type { Kysely } from 'kysely';
import type { DialectName } from './connect.ts';
import type { Database } from './schema.ts';

/**
 * Serialises work on one account inside a transaction (a count checked against a limit,
 * then a write): PostgreSQL locks the user's row, which always exists; SQLite transactions
 * are already serial.
 */
export async function lockUser(
  db: Kysely<Database>,
  dialect: DialectName,
  userId: number,
): Promise<void> {
  if (dialect === 'postgres') {
    await db.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
  }
}
