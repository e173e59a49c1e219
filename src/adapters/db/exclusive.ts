import { sql } from 'kysely';
import type { DatabaseHandle } from './connect.ts';

/** Runs `fn` unless another node runs the same named job now (then `ran` is false). */
export type RunExclusive = <T>(
  name: string,
  fn: () => Promise<T>,
) => Promise<{ ran: true; value: T } | { ran: false }>;

/**
 * One node at a time for periodic jobs (the retention sweeper). On PostgreSQL a session
 * advisory lock, held on one pooled connection for the job's duration: when the node dies,
 * its connection closes and the lock goes with it, so there is no expiry to tune. The key
 * includes the schema, so deployments (or test runs) sharing a server do not contend.
 * SQLite is one node by construction and needs none.
 */
export function createExclusiveRunner(database: DatabaseHandle): RunExclusive {
  if (database.dialect === 'sqlite') {
    return async (_name, fn) => ({ ran: true, value: await fn() });
  }
  return (name, fn) =>
    database.db.connection().execute(async (conn) => {
      const lockKey = sql`hashtext(current_schema() || ${`:${name}`})`;
      const { rows } = await sql<{ locked: boolean }>`
        SELECT pg_try_advisory_lock(${lockKey}) AS locked`.execute(conn);
      if (rows[0]?.locked !== true) return { ran: false as const };
      try {
        return { ran: true as const, value: await fn() };
      } finally {
        await sql`SELECT pg_advisory_unlock(${lockKey})`.execute(conn).catch(() => {});
      }
    });
}
