import { CompiledQuery, type Kysely } from 'kysely';
import type { CounterFactory, WindowCounter, WindowState } from '../../domain/limits.ts';
import type { Database } from '../db/schema.ts';

export interface PrunableCounters extends CounterFactory {
  /** Deletes windows that ended before `now` (run by the elected retention sweeper). */
  prune(now: number): Promise<number>;
}

interface Row {
  points: number;
  expires_at: number;
}

/**
 * Counters in PostgreSQL, for several nodes sharing a database without Redis. Each take is
 * one conditional upsert (a new window, or one more point while under the limit), so the
 * limit is exact across any number of nodes; a refused request takes no point. Slower
 * than Redis (a row write per request), exact all the same.
 */
export function createPostgresCounters(db: Kysely<Database>): PrunableCounters {
  const run = async (text: string, params: unknown[]): Promise<Row[]> =>
    (await db.executeQuery<Row>(CompiledQuery.raw(text, params))).rows;
  const toState = (row: Row | undefined, now: number, windowMs: number): WindowState =>
    row && Number(row.expires_at) > now
      ? { used: Number(row.points), resetAt: Number(row.expires_at) }
      : { used: 0, resetAt: now + windowMs };

  return {
    create({ name, limit, windowMs }): WindowCounter {
      const rowKey = (key: string) => `${name}:${key}`;
      const read = async (key: string) =>
        (
          await run('SELECT points, expires_at FROM window_counters WHERE key = $1', [rowKey(key)])
        )[0];
      return {
        limit,
        async take(key, firstWindowMs) {
          const now = Date.now();
          const [row] = await run(
            `INSERT INTO window_counters AS c (key, points, expires_at) VALUES ($1, 1, $3::bigint)
             ON CONFLICT (key) DO UPDATE SET
               points = CASE WHEN c.expires_at <= $2::bigint THEN 1 ELSE c.points + 1 END,
               expires_at = CASE WHEN c.expires_at <= $2::bigint THEN $3::bigint ELSE c.expires_at END
             WHERE c.expires_at <= $2::bigint OR c.points < $4::integer
             RETURNING points, expires_at`,
            [rowKey(key), now, now + (firstWindowMs ?? windowMs), limit],
          );
          if (row) return { ...toState(row, now, windowMs), allowed: Number(row.points) <= limit };
          const state = toState(await read(key), now, windowMs);
          return { used: Math.min(state.used, limit), resetAt: state.resetAt, allowed: false };
        },
        async peek(key) {
          return toState(await read(key), Date.now(), windowMs);
        },
        async refund(key) {
          await run(
            `UPDATE window_counters SET points = points - 1
             WHERE key = $1 AND points > 0 AND expires_at > $2::bigint`,
            [rowKey(key), Date.now()],
          );
        },
        async reset(key) {
          await run('DELETE FROM window_counters WHERE key = $1', [rowKey(key)]);
        },
      };
    },
    async prune(now) {
      const result = await db.executeQuery(
        CompiledQuery.raw('DELETE FROM window_counters WHERE expires_at <= $1::bigint', [now]),
      );
      return Number(result.numAffectedRows ?? 0);
    },
  };
}
