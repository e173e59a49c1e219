/**
 * The quota store (domain/store.ts `QuotaStore`): a month's units and the day's chart count,
 * taken in one conditional write exact under concurrency (`coalesced`), given back, and held
 * for captures in flight (domain/quota/quota-holds.ts) until delivered or swept.
 */
import { CompiledQuery, type Kysely, sql } from 'kysely';
import type { QuotaStore, QuotaUnit } from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { type HotPath, rawRunner } from './hot-path.ts';
import type { DirectSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

/**
 * One unit (or `units`, a batch) of the month and, with them, the day's count: one
 * statement. Inserting the month's first units or adding to them, both only while the
 * total stays within the limit; the day is counted only when the month was.
 */
const PG_TAKE_COUNTS = `WITH m AS (
    INSERT INTO usage_months AS m (user_id, period, used)
    SELECT $1::bigint, $2::text, $3::integer WHERE $3::integer <= $4::integer
    ON CONFLICT (user_id, period) DO UPDATE SET used = m.used + $3::integer
    WHERE m.used + $3::integer <= $4::integer
    RETURNING m.used
  ), d AS (
    INSERT INTO usage_days AS d (user_id, day, count)
    SELECT $1::bigint, $5::text, $3::integer FROM m WHERE $5::text IS NOT NULL
    ON CONFLICT (user_id, day) DO UPDATE SET count = d.count + $3::integer
  )`;
const PG_TAKE = `${PG_TAKE_COUNTS}
  SELECT used FROM m`;

/** The same, and a hold per unit (expiring at $6), in the same statement. */
const PG_TAKE_HELD = `${PG_TAKE_COUNTS}, h AS (
    INSERT INTO quota_holds (user_id, period, day, expires_at)
    SELECT $1::bigint, $2::text, $5::text, $6::bigint FROM m, generate_series(1, $3::integer)
    RETURNING id
  )
  SELECT m.used, ARRAY(SELECT id FROM h ORDER BY id) AS holds FROM m`;

const PG_RELEASE = `WITH m AS (
    UPDATE usage_months SET used = used - 1
    WHERE user_id = $1::bigint AND period = $2::text AND used > 0
    RETURNING used
  )
  UPDATE usage_days SET count = count - 1
  WHERE user_id = $1::bigint AND day = $3::text AND count > 0 AND EXISTS (SELECT 1 FROM m)`;

/** SQLite has no writing CTE: the same as two statements in one transaction (and the holds). */
function* sqliteTake(take: TakeArgs, holdUntil: number | null): Steps<Taken | null> {
  const { unit, limit, units } = take;
  const { userId, period, day } = unit;
  const [row] = (yield [
    `INSERT INTO usage_months (user_id, period, used) SELECT ?, ?, ? WHERE ? <= ?
     ON CONFLICT (user_id, period) DO UPDATE SET used = usage_months.used + excluded.used
     WHERE usage_months.used + excluded.used <= ? RETURNING used`,
    [userId, period, units, units, limit, limit],
  ]) as Array<{ used: number }>;
  if (!row) return null;
  if (day !== undefined) {
    yield [
      `INSERT INTO usage_days (user_id, day, count) VALUES (?, ?, ?)
       ON CONFLICT (user_id, day) DO UPDATE SET count = usage_days.count + excluded.count`,
      [userId, day, units],
    ];
  }
  const holds: number[] = [];
  for (let i = 0; holdUntil !== null && i < units; i++) {
    const [hold] = (yield [
      `INSERT INTO quota_holds (user_id, period, day, expires_at) VALUES (?, ?, ?, ?)
       RETURNING id`,
      [userId, period, day ?? null, holdUntil],
    ]) as Array<{ id: number }>;
    holds.push(Number(hold?.id));
  }
  return { used: Number(row.used), holds };
}

function* sqliteRelease({ userId, period, day }: QuotaUnit): Steps<void> {
  const back = yield [
    `UPDATE usage_months SET used = used - 1
      WHERE user_id = ? AND period = ? AND used > 0 RETURNING used`,
    [userId, period],
  ];
  if (back.length > 0 && day !== undefined) {
    yield [
      `UPDATE usage_days SET count = count - 1
        WHERE user_id = ? AND day = ? AND count > 0 RETURNING count`,
      [userId, day],
    ];
  }
}

/** Statements of one transaction, each step given the rows of the one before. */
type Steps<T> = Generator<[sql: string, params: unknown[]], T, unknown[]>;

/**
 * Runs `steps` in one SQLite transaction: synchronously on the connection when it is free
 * (node-sqlite.ts `direct`), else through Kysely, after the transaction that holds it, or
 * inside the store's own transaction.
 */
async function sqliteTransaction<T>(
  db: Kysely<Database>,
  direct: DirectSqlite | null,
  steps: () => Steps<T>,
): Promise<T> {
  if (direct?.available()) {
    return direct.transaction(() => {
      const it = steps();
      let next = it.next();
      while (!next.done) next = it.next(direct.all(...next.value));
      return next.value;
    });
  }
  const viaKysely = async (trx: Kysely<Database>): Promise<T> => {
    const it = steps();
    let next = it.next();
    while (!next.done) {
      const [text, params] = next.value;
      next = it.next((await trx.executeQuery(CompiledQuery.raw(text, params))).rows as unknown[]);
    }
    return next.value;
  };
  return db.isTransaction ? viaKysely(db) : db.transaction().execute(viaKysely);
}

/** What one write took: the month's count after it, and the holds it wrote (if any). */
interface Taken {
  used: number;
  holds: number[];
}

/** One write's units (one, or a group's), under the month's `limit`. */
interface TakeArgs {
  unit: QuotaUnit;
  limit: number;
  units: number;
}

type Take = (args: TakeArgs) => Promise<Taken | null>;

/** One reservation's share of a write: its count, and its hold when the write held. */
type Share = { used: number; hold: number | undefined } | null;

/**
 * Concurrent reservations of one account on this node share one write. Every reservation
 * of an account writes the same rows: on PostgreSQL each would wait for the previous one's
 * commit (the row lock is held until its WAL flush), one flush per request; on SQLite each
 * is a transaction of its own. Here, the reservations that arrive while one is being written
 * (and, with `gather`, those of the same event-loop turn) go together in the next write,
 * which takes all their units under the same limit condition. A batch that does not fit is
 * taken one unit at a time, in arrival order, until one is refused (the quota is full then,
 * so the rest are refused too). Every write is the same conditional upsert, committed before
 * its requests go on: never more than the limit, on any number of nodes, nothing to lose in
 * a crash.
 */
function coalesced(
  take: Take,
  gather?: () => Promise<void>,
): (unit: QuotaUnit, limit: number) => Promise<Share> {
  interface Waiter {
    resolve(share: Share): void;
    reject(err: unknown): void;
  }
  const queues = new Map<string, Waiter[]>();
  const drain = async (
    key: string,
    queue: Waiter[],
    group: { unit: QuotaUnit; limit: number },
  ): Promise<void> => {
    for (;;) {
      if (gather) await gather();
      const batch = queue.splice(0, queue.length);
      if (batch.length === 0) {
        queues.delete(key);
        return;
      }
      try {
        const taken = await take({ ...group, units: batch.length });
        if (taken !== null || batch.length === 1) {
          batch.forEach((w, i) => {
            w.resolve(
              taken === null
                ? null
                : { used: taken.used - batch.length + 1 + i, hold: taken.holds[i] },
            );
          });
          continue;
        }
      } catch (err) {
        for (const w of batch) w.reject(err);
        continue;
      }
      let full = false;
      for (const w of batch) {
        if (full) {
          w.resolve(null);
          continue;
        }
        try {
          const taken = await take({ ...group, units: 1 });
          full = taken === null;
          w.resolve(taken === null ? null : { used: taken.used, hold: taken.holds[0] });
        } catch (err) {
          w.reject(err);
        }
      }
    }
  };
  return (unit, limit) =>
    new Promise<Share>((resolve, reject) => {
      const { userId, period, day } = unit;
      const key = `${userId}|${period}|${limit}|${day ?? ''}`;
      const queue = queues.get(key);
      if (queue) {
        queue.push({ resolve, reject });
        return;
      }
      const fresh = [{ resolve, reject }];
      queues.set(key, fresh);
      void drain(key, fresh, { unit: { userId, period, day }, limit });
    });
}

/** One turn of the event loop: requests read in the same poll phase reach the queue first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A hold's unit, as the month's and the day's counts know it. */
type HoldRow = { user_id: number; period: string; day: string | null };

/** Where a hold's unit was counted: the month's `used`, and the day's `count` if it had one. */
const COUNTED_IN = [
  { table: 'usage_months', column: 'used', unit: 'period' },
  { table: 'usage_days', column: 'count', unit: 'day' },
] as const satisfies readonly CountedIn[];

/** A table and two of its columns, checked against the schema (the statement is raw SQL). */
type CountedIn = {
  [T in keyof Database]: {
    table: T;
    column: keyof Database[T] & string;
    unit: keyof Database[T] & string;
  };
}[keyof Database];

/**
 * Takes the units of deleted holds out of their months and days (never below zero):
 * one statement per month and per day they were counted in.
 */
async function giveBack(trx: Kysely<Database>, rows: readonly HoldRow[]): Promise<void> {
  for (const { table, column, unit } of COUNTED_IN) {
    const counts = new Map<string, { userId: number; at: string; n: number }>();
    for (const row of rows) {
      const at = row[unit];
      if (at === null) continue;
      const key = `${row.user_id} ${at}`;
      const seen = counts.get(key);
      if (seen) seen.n++;
      else counts.set(key, { userId: Number(row.user_id), at, n: 1 });
    }
    const count = sql.ref(column);
    for (const { userId, at, n } of counts.values()) {
      await sql`update ${sql.table(table)}
        set ${count} = case when ${count} > ${n} then ${count} - ${n} else 0 end
        where "user_id" = ${userId} and ${sql.ref(unit)} = ${at}`.execute(trx);
    }
  }
}

export function quotaStore(db: Kysely<Database>, dialect: DialectName, hot: HotPath): QuotaStore {
  return { ...unitWrites(db, dialect, hot), ...holdWrites(db, dialect, hot), ...usageReads(db) };
}

/** The writer of reservations: PostgreSQL's one statement, or SQLite's one transaction. */
function takeWriter(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): (holdUntil: () => number | null) => (unit: QuotaUnit, limit: number) => Promise<Share> {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  if (dialect === 'sqlite') {
    // SQLite statements run synchronously, so nothing overlaps a write in flight: the
    // requests of one event-loop turn are grouped instead.
    return (holdUntil) =>
      coalesced(
        (take) => sqliteTransaction(db, direct, () => sqliteTake(take, holdUntil())),
        nextTurn,
      );
  }
  return (holdUntil) =>
    coalesced(async ({ unit, limit, units }) => {
      const until = holdUntil();
      const params = [unit.userId, unit.period, units, limit, unit.day ?? null];
      const [row] = await raw<{ used: number; holds?: unknown[] }>(
        until === null ? PG_TAKE : PG_TAKE_HELD,
        until === null ? params : [...params, until],
      );
      if (!row) return null;
      // bigint[] comes back as strings (only BIGINT itself has a number parser).
      return { used: Number(row.used), holds: (row.holds ?? []).map(Number) };
    });
}

/** Units taken and given back: reserve, reserveHeld, release. */
function unitWrites(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): Pick<QuotaStore, 'reserve' | 'reserveHeld' | 'release'> {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  const writer = takeWriter(db, dialect, hot);
  const reserve = writer(() => null);
  // Reservations that hold are grouped apart from those that do not (a hit's write stays the
  // statement without holds); a group's holds expire at the latest `until` asked for.
  let heldUntil = 0;
  const reserveHeld = writer(() => heldUntil);
  return {
    reserve: async (unit, { limit }) =>
      limit <= 0 ? null : ((await reserve(unit, limit))?.used ?? null),
    async reserveHeld(unit, { limit, until }) {
      if (limit <= 0) return null;
      heldUntil = Math.max(heldUntil, until);
      const share = await reserveHeld(unit, limit);
      return share === null || share.hold === undefined
        ? null
        : { used: share.used, hold: share.hold };
    },
    async release(unit) {
      if (dialect === 'postgres')
        await raw(PG_RELEASE, [unit.userId, unit.period, unit.day ?? null]);
      else await sqliteTransaction(db, direct, () => sqliteRelease(unit));
    },
  };
}

/** Holds of captures in flight: given back, kept, renewed, swept when expired. */
function holdWrites(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): Pick<QuotaStore, 'releaseHeld' | 'keep' | 'renew' | 'returnExpired'> {
  const raw = rawRunner(db, dialect, hot);
  const inTransaction = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
    db.isTransaction ? fn(db) : db.transaction().execute(fn);
  return {
    async releaseHeld(hold) {
      await inTransaction(async (trx) => {
        const rows = await trx
          .deleteFrom('quota_holds')
          .where('id', '=', hold)
          .returning(['user_id', 'period', 'day'])
          .execute();
        await giveBack(trx, rows);
      });
    },
    async keep(hold) {
      const rows = await raw('DELETE FROM quota_holds WHERE id = ? RETURNING id', [hold]);
      return rows.length > 0;
    },
    async renew(holds, until) {
      if (holds.length === 0) return;
      await db
        .updateTable('quota_holds')
        .set({ expires_at: until })
        .where('id', 'in', [...holds])
        .execute();
    },
    async returnExpired(now, limit) {
      // DELETE ... RETURNING hands each expired hold to one sweeper, on any number of nodes,
      // and its unit goes back in the same transaction: given back once, never twice.
      return inTransaction(async (trx) => {
        const expired = trx
          .selectFrom('quota_holds')
          .select('id')
          .where('expires_at', '<=', now)
          .orderBy('id')
          .limit(limit);
        const rows = await trx
          .deleteFrom('quota_holds')
          .where('id', 'in', expired)
          .returning(['user_id', 'period', 'day'])
          .execute();
        await giveBack(trx, rows);
        return rows.length;
      });
    },
  };
}

/** The month's count and the usage chart's days. */
function usageReads(db: Kysely<Database>): Pick<QuotaStore, 'used' | 'days'> {
  return {
    async used(userId, period) {
      const row = await db
        .selectFrom('usage_months')
        .select('used')
        .where('user_id', '=', userId)
        .where('period', '=', period)
        .executeTakeFirst();
      return row ? Number(row.used) : 0;
    },
    async days(userId, fromDay, toDay) {
      const rows = await db
        .selectFrom('usage_days')
        .select(['day', 'count'])
        .where('user_id', '=', userId)
        .where('day', '>=', fromDay)
        .where('day', '<=', toDay)
        .orderBy('day')
        .execute();
      return rows.map((r) => ({ day: r.day, count: Number(r.count) }));
    },
  };
}
