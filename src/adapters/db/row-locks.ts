/**
 * The one place where the two databases differ on concurrent writers. PostgreSQL runs
 * transactions side by side, so a transaction that reads rows before it writes them locks
 * them (`FOR UPDATE`), and workers taking work skip rows another one holds (`SKIP LOCKED`).
 * SQLite runs one write transaction at a time: there is nothing to lock, and these are no-ops.
 * (The hot path's raw statements and the quota's single-statement writes differ by dialect
 * too, for speed: hot-path.ts and quota-store.ts.)
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { DialectName } from './connect.ts';
import type { Database } from './schema.ts';

/**
 * The rows `query` reads, locked until the transaction ends: `wait` for rows another
 * transaction holds, or `skip` them (each worker takes other rows).
 */
export function lockedRows<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  dialect: DialectName,
  others: 'wait' | 'skip',
): SelectQueryBuilder<DB, TB, O> {
  if (dialect !== 'postgres') return query;
  return others === 'skip' ? query.forUpdate().skipLocked() : query.forUpdate();
}

/** Locks one row by id until the transaction ends (PostgreSQL), waiting for its holder. */
export async function lockRow(
  db: Kysely<Database>,
  dialect: DialectName,
  row: { table: 'users' | 'monitors'; id: number | string },
): Promise<void> {
  if (dialect !== 'postgres') return;
  // The two tables' ids differ in type; the statement is the same.
  const query = db
    .selectFrom(row.table)
    .select('id')
    .where('id', '=', row.id as never);
  await query.forUpdate().execute();
}

/**
 * Serialises work on one account inside a transaction (a count checked against a limit,
 * then a write): PostgreSQL locks the user's row, which always exists; SQLite transactions
 * are already serial.
 */
export function lockUser(db: Kysely<Database>, dialect: DialectName, userId: number) {
  return lockRow(db, dialect, { table: 'users', id: userId });
}
