import DataLoader from 'dataloader';
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { PageMetadata } from '../../domain/captures/renderer.ts';
import type { PlanName } from '../../domain/plans.ts';
import type {
  ApiKeyRecord,
  KeyStore,
  QuotaStore,
  ScreenshotRecord,
  ScreenshotStore,
  SessionStore,
  Store,
  User,
  UserStore,
} from '../../domain/store.ts';
import { deepFreeze } from '../../lib/deep-freeze.ts';
import { billingStore } from './billing-store.ts';
import type { DialectName, PreparedStatements } from './connect.ts';
import { jobStore, webhookStore } from './job-store.ts';
import { lockUser } from './lock-user.ts';
import type { DirectSqlite } from './node-sqlite.ts';
import { type RememberedRows, rememberedRows } from './remembered-rows.ts';
import type { ApiKeysTable, Database, ScreenshotsTable, UsersTable } from './schema.ts';

/**
 * The hot path (every authenticated request, every cache hit) skips Kysely's query builder:
 * building and compiling took about a third of a cache-hit request. These few statements
 * are plain SQL valid on both dialects, `?` placeholders rewritten to `$n` for PostgreSQL.
 * On SQLite they run as synchronous prepared statements on the connection (`direct`),
 * except while a Kysely transaction holds it; on PostgreSQL, outside transactions, as named
 * prepared statements (`prepared`), parsed and planned once per connection.
 */
function rawRunner(db: Kysely<Database>, dialect: DialectName, hot: HotPath) {
  const texts = new Map<string, { sql: string; name: string }>();
  return async <R>(text: string, params: unknown[]): Promise<R[]> => {
    if (hot.direct?.available()) return hot.direct.all<R>(text, params);
    let known = texts.get(text);
    if (known === undefined) {
      let n = 0;
      const sql = dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
      known = { sql, name: statementName(sql) };
      texts.set(text, known);
    }
    if (hot.prepared && !db.isTransaction)
      return hot.prepared.query<R>(known.name, known.sql, params);
    const result = await db.executeQuery<R>(CompiledQuery.raw(known.sql, params));
    return result.rows;
  };
}

/**
 * Hot-path reads of one event-loop turn go to PostgreSQL as one statement. Every round trip
 * costs a write and a read on a socket on each side, and on a busy node those, not the
 * queries, are most of a cache hit's time; the requests that arrive together (read in the
 * same poll phase) are looked up together. Nothing is remembered between turns (`cache:
 * false`): each request still reads the rows as they are when it asks. Returns null where
 * there is no network round trip to save (SQLite's statements are in-process) or inside a
 * transaction.
 */
function turnBatcher<K, V>(
  hot: HotPath,
  load: (keys: readonly K[]) => Promise<V[]>,
): DataLoader<K, V> | null {
  if (!hot.prepared) return null;
  return new DataLoader<K, V>(load, {
    cache: false,
    batchScheduleFn: (run) => setImmediate(run),
    maxBatchSize: 200,
  });
}

/** The fast ways to the database for the hot path, when there are (connect.ts). */
export interface HotPath {
  direct?: DirectSqlite | null;
  prepared?: PreparedStatements | null;
}

/** One name per statement text, the same in every store of the process. */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `shotsmith_hot_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  return name;
}

const toUser = (
  row: Pick<Selectable<UsersTable>, 'id' | 'email' | 'plan' | 'created_at'>,
): User => ({
  id: Number(row.id),
  email: row.email,
  plan: row.plan as PlanName,
  createdAt: row.created_at,
});

const toKey = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: Number(row.id),
  userId: Number(row.user_id),
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

/** A cache lookup for an API key's request (findCachedForKey's arguments). */
interface CachedLookup {
  cacheKey: string;
  since: number;
  now: number;
  keyId: number;
}

/** The key's state, and the newest fresh record or a row of nulls. */
type CachedForKeyRow = { key_active: number } & {
  [K in keyof Selectable<ScreenshotsTable>]: unknown;
};

/** What a cache lookup for a key's request finds (findCachedForKey's answer). */
type CachedLookupResult = Awaited<ReturnType<ScreenshotStore['findCachedForKey']>>;

const CACHED_FOR_KEY = `SELECT s.*, k.active AS key_active
  FROM (SELECT COUNT(*) AS active FROM api_keys WHERE id = ? AND revoked_at IS NULL) k
  LEFT JOIN (SELECT * FROM screenshots
              WHERE cache_key = ? AND created_at >= ? AND expires_at > ?
              ORDER BY created_at DESC, id DESC LIMIT 1) s ON 1 = 1`;
/** The same for the newest record of the cache key, whatever its age (what SQLite remembers). */
const NEWEST_FOR_KEY = `SELECT s.*, k.active AS key_active
  FROM (SELECT COUNT(*) AS active FROM api_keys WHERE id = ? AND revoked_at IS NULL) k
  LEFT JOIN (SELECT * FROM screenshots WHERE cache_key = ?
              ORDER BY created_at DESC, id DESC LIMIT 1) s ON 1 = 1`;

const lookupOf = (row: CachedForKeyRow | undefined): CachedLookupResult => ({
  record:
    row && row.id !== null ? toScreenshot(row as unknown as Selectable<ScreenshotsTable>) : null,
  keyActive: Number(row?.key_active ?? 0) > 0,
});

/** About how many characters a remembered lookup holds (its record's text). */
function lookupChars({ record }: CachedLookupResult): number {
  if (record === null) return 64;
  const m = record.metadata;
  const text = m
    ? [m.title, m.description, m.final_url, m.og.title, m.og.description, m.og.image, m.icon_url]
    : [];
  return 256 + record.url.length + text.reduce((n, t) => n + (t?.length ?? 0), 0);
}

/** A key's row with its account's, as the hot-path lookups read them. */
type KeyWithOwner = Selectable<ApiKeysTable> & {
  email: string;
  plan: string;
  user_created_at: number;
};
const KEY_WITH_OWNER = `k.id, k.user_id, k.name, k.prefix, k.key_hash, k.created_at,
  k.last_used_at, k.revoked_at, k.signing_nonce, u.email, u.plan,
  u.created_at AS user_created_at`;
const KEY_BY_HASH = `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
  WHERE k.key_hash = ? AND k.revoked_at IS NULL`;
const ownerOf = (row: KeyWithOwner): User =>
  toUser({ id: row.user_id, email: row.email, plan: row.plan, created_at: row.user_created_at });

const isUniqueViolation = (err: unknown): boolean => {
  const e = err as { code?: string; errcode?: number; message?: string };
  // PostgreSQL 23505; SQLite SQLITE_CONSTRAINT_UNIQUE (2067).
  return (
    e.code === '23505' || e.errcode === 2067 || /UNIQUE constraint failed/.test(e.message ?? '')
  );
};

function userStore(db: Kysely<Database>): UserStore {
  return {
    async create({ email, passwordHash, plan, now }) {
      try {
        const row = await db
          .insertInto('users')
          .values({ email, password_hash: passwordHash, plan, created_at: now, updated_at: now })
          .returning(['id', 'email', 'plan', 'created_at'])
          .executeTakeFirstOrThrow();
        return toUser(row);
      } catch (err) {
        if (isUniqueViolation(err)) return 'email_taken';
        throw err;
      }
    },
    async findByEmail(email) {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', email)
        .executeTakeFirst();
      return row ? { user: toUser(row), passwordHash: row.password_hash } : null;
    },
    async findById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toUser(row) : null;
    },
    async setPlan(id, plan, now) {
      const res = await db
        .updateTable('users')
        .set({ plan, updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async webhookNonce(id, fresh) {
      // One read once the account has a nonce (every delivery attempt asks); the first use
      // writes one, and of two writers at once the first wins.
      const read = async () =>
        (
          await db
            .selectFrom('users')
            .select('webhook_nonce')
            .where('id', '=', id)
            .executeTakeFirst()
        )?.webhook_nonce ?? null;
      const known = await read();
      if (known !== null) return known;
      await db
        .updateTable('users')
        .set({ webhook_nonce: fresh })
        .where('id', '=', id)
        .where('webhook_nonce', 'is', null)
        .execute();
      return (await read()) ?? fresh;
    },
    async setWebhookNonce(id, nonce) {
      await db.updateTable('users').set({ webhook_nonce: nonce }).where('id', '=', id).execute();
    },
  };
}

function sessionStore(db: Kysely<Database>): SessionStore {
  return {
    async create({ idHash, userId, now, expiresAt }) {
      await db
        .insertInto('sessions')
        .values({ id: idHash, user_id: userId, created_at: now, expires_at: expiresAt })
        .execute();
    },
    async findUser(idHash, now) {
      const row = await db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['users.id', 'users.email', 'users.plan', 'users.created_at'])
        .where('sessions.id', '=', idHash)
        .where('sessions.expires_at', '>', now)
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },
    async delete(idHash) {
      await db.deleteFrom('sessions').where('id', '=', idHash).execute();
    },
    async deleteExpired(now) {
      const res = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

/** Active keys a SQLite node remembers (remembered-rows.ts), a few hundred bytes each. */
const REMEMBERED_KEYS = 10_000;
/** Cache lookups a SQLite node remembers, and the characters of their records' text. */
const REMEMBERED_LOOKUPS = 10_000;
const REMEMBERED_LOOKUP_CHARS = 4_000_000;

type FoundKey = NonNullable<Awaited<ReturnType<KeyStore['findActiveByHash']>>>;

function keyStore(db: Kysely<Database>, dialect: DialectName, hot: HotPath): KeyStore {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  const remembered: RememberedRows<FoundKey> | null = direct
    ? rememberedRows(direct, { max: REMEMBERED_KEYS })
    : null;
  const found = (row: KeyWithOwner | undefined): FoundKey | null =>
    row ? { key: toKey(row), keyHash: row.key_hash, user: ownerOf(row) } : null;
  const byHash = turnBatcher<string, KeyWithOwner | undefined>(hot, async (hashes) => {
    const rows = await raw<KeyWithOwner>(
      `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = ANY(?::text[]) AND k.revoked_at IS NULL`,
      [hashes],
    );
    const found = new Map(rows.map((row) => [row.key_hash, row]));
    return hashes.map((hash) => found.get(hash));
  });
  return {
    async createWithinLimit({ userId, name, prefix, keyHash, signingNonce, now, maxActive }) {
      return db.transaction().execute(async (trx) => {
        // Serialise key creation per account so two concurrent creates cannot both pass
        // the count.
        await lockUser(trx, dialect, userId);
        const { n } = await trx
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxActive) return 'limit_reached' as const;
        const row = await trx
          .insertInto('api_keys')
          .values({
            user_id: userId,
            name,
            prefix,
            key_hash: keyHash,
            signing_nonce: signingNonce,
            created_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return toKey(row);
      });
    },
    async listActive(userId) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(toKey);
    },
    async revoke(userId, keyId, now) {
      const res = await db
        .updateTable('api_keys')
        .set({ revoked_at: now })
        .where('id', '=', keyId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async findActiveByHash(keyHash) {
      if (byHash) return found(await byHash.load(keyHash));
      if (remembered && direct?.available()) {
        return remembered.get(keyHash, () =>
          deepFreeze(found(direct.all<KeyWithOwner>(KEY_BY_HASH, [keyHash])[0])),
        );
      }
      return found((await raw<KeyWithOwner>(KEY_BY_HASH, [keyHash]))[0]);
    },
    async findActiveById(keyId) {
      const [row] = await raw<KeyWithOwner>(
        `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.id = ? AND k.revoked_at IS NULL`,
        [keyId],
      );
      return row ? { key: toKey(row), signingNonce: row.signing_nonce, user: ownerOf(row) } : null;
    },
    async setSigningNonce(userId, keyId, nonce) {
      const res = await db
        .updateTable('api_keys')
        .set({ signing_nonce: nonce })
        .where('id', '=', keyId)
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async isActive(keyId) {
      const rows = await raw('SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL', [keyId]);
      return rows.length > 0;
    },
    async touch(keyId, now, minIntervalMs) {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', keyId)
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - minIntervalMs)]),
        )
        .execute();
    },
  };
}

/**
 * The store over Kysely. `hot`: the faster ways in for the hot path (connect.ts), none
 * inside a transaction.
 */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath = {},
): Store {
  const store: Store = {
    users: userStore(db),
    sessions: sessionStore(db),
    keys: keyStore(db, dialect, hot),
    quota: quotaStore(db, dialect, hot),
    screenshots: screenshotStore(db, dialect, hot),
    billing: billingStore(db, dialect),
    jobs: jobStore(db, dialect),
    webhooks: webhookStore(db, dialect),
    // Inside a transaction the store already runs in it (Kysely does not nest them).
    transaction: (fn) =>
      db.isTransaction
        ? fn(store)
        : db.transaction().execute((trx) => fn(createKyselyStore(trx, dialect))),
  };
  return store;
}

/**
 * One unit (or `units`, a batch) of the month and, with them, the day's count: one
 * statement. Inserting the month's first units or adding to them, both only while the
 * total stays within the limit; the day is counted only when the month was.
 */
const PG_TAKE = `WITH m AS (
    INSERT INTO usage_months AS m (user_id, period, used)
    SELECT $1::bigint, $2::text, $3::integer WHERE $3::integer <= $4::integer
    ON CONFLICT (user_id, period) DO UPDATE SET used = m.used + $3::integer
    WHERE m.used + $3::integer <= $4::integer
    RETURNING m.used
  ), d AS (
    INSERT INTO usage_days AS d (user_id, day, count)
    SELECT $1::bigint, $5::text, $3::integer FROM m WHERE $5::text IS NOT NULL
    ON CONFLICT (user_id, day) DO UPDATE SET count = d.count + $3::integer
  )
  SELECT used FROM m`;

/** The same, and a hold per unit (expiring at $6), in the same statement. */
const PG_TAKE_HELD = `WITH m AS (
    INSERT INTO usage_months AS m (user_id, period, used)
    SELECT $1::bigint, $2::text, $3::integer WHERE $3::integer <= $4::integer
    ON CONFLICT (user_id, period) DO UPDATE SET used = m.used + $3::integer
    WHERE m.used + $3::integer <= $4::integer
    RETURNING m.used
  ), d AS (
    INSERT INTO usage_days AS d (user_id, day, count)
    SELECT $1::bigint, $5::text, $3::integer FROM m WHERE $5::text IS NOT NULL
    ON CONFLICT (user_id, day) DO UPDATE SET count = d.count + $3::integer
  ), h AS (
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
function* sqliteTake(
  userId: number,
  period: string,
  limit: number,
  day: string | undefined,
  units: number,
  holdUntil: number | null,
): Steps<Taken | null> {
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

function* sqliteRelease(userId: number, period: string, day: string | undefined): Steps<void> {
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

type Take = (
  userId: number,
  period: string,
  limit: number,
  day: string | undefined,
  units: number,
) => Promise<Taken | null>;

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
): (userId: number, period: string, limit: number, day: string | undefined) => Promise<Share> {
  interface Waiter {
    resolve(share: Share): void;
    reject(err: unknown): void;
  }
  const queues = new Map<string, Waiter[]>();
  const drain = async (
    key: string,
    queue: Waiter[],
    args: [number, string, number, string | undefined],
  ): Promise<void> => {
    for (;;) {
      if (gather) await gather();
      const batch = queue.splice(0, queue.length);
      if (batch.length === 0) {
        queues.delete(key);
        return;
      }
      try {
        const taken = await take(...args, batch.length);
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
          const taken = await take(...args, 1);
          full = taken === null;
          w.resolve(taken === null ? null : { used: taken.used, hold: taken.holds[0] });
        } catch (err) {
          w.reject(err);
        }
      }
    }
  };
  return (userId, period, limit, day) =>
    new Promise<Share>((resolve, reject) => {
      const key = `${userId}|${period}|${limit}|${day ?? ''}`;
      const queue = queues.get(key);
      if (queue) {
        queue.push({ resolve, reject });
        return;
      }
      const fresh = [{ resolve, reject }];
      queues.set(key, fresh);
      void drain(key, fresh, [userId, period, limit, day]);
    });
}

/** One turn of the event loop: requests read in the same poll phase reach the queue first. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A hold's unit, as the month's and the day's counts know it. */
type HoldRow = { user_id: number; period: string; day: string | null };

/**
 * Takes the units of deleted holds out of their months and days (never below zero):
 * one statement per month and per day they were counted in.
 */
async function giveBack(trx: Kysely<Database>, rows: readonly HoldRow[]): Promise<void> {
  const count = (keyOf: (r: HoldRow) => string | null) => {
    const n = new Map<string, { row: HoldRow; n: number }>();
    for (const row of rows) {
      const key = keyOf(row);
      if (key === null) continue;
      const seen = n.get(key);
      if (seen) seen.n++;
      else n.set(key, { row, n: 1 });
    }
    return n.values();
  };
  for (const { row, n } of count((r) => `${r.user_id} ${r.period}`)) {
    await trx
      .updateTable('usage_months')
      .set((eb) => ({
        used: eb
          .case()
          .when('used', '>', n)
          .then(eb('used', '-', n))
          .else(0)
          .end(),
      }))
      .where('user_id', '=', Number(row.user_id))
      .where('period', '=', row.period)
      .execute();
  }
  for (const { row, n } of count((r) => (r.day === null ? null : `${r.user_id} ${r.day}`))) {
    await trx
      .updateTable('usage_days')
      .set((eb) => ({
        count: eb
          .case()
          .when('count', '>', n)
          .then(eb('count', '-', n))
          .else(0)
          .end(),
      }))
      .where('user_id', '=', Number(row.user_id))
      .where('day', '=', row.day as string)
      .execute();
  }
}

function quotaStore(db: Kysely<Database>, dialect: DialectName, hot: HotPath): QuotaStore {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  const writer = (holdUntil: () => number | null) =>
    dialect === 'postgres'
      ? coalesced(async (userId, period, limit, day, units) => {
          const until = holdUntil();
          const [row] =
            until === null
              ? await raw<{ used: number; holds?: unknown[] }>(PG_TAKE, [
                  userId,
                  period,
                  units,
                  limit,
                  day ?? null,
                ])
              : await raw<{ used: number; holds?: unknown[] }>(PG_TAKE_HELD, [
                  userId,
                  period,
                  units,
                  limit,
                  day ?? null,
                  until,
                ]);
          if (!row) return null;
          // bigint[] comes back as strings (only BIGINT itself has a number parser).
          return { used: Number(row.used), holds: (row.holds ?? []).map(Number) };
        })
      : // SQLite statements run synchronously, so nothing overlaps a write in flight: the
        // requests of one event-loop turn are grouped instead.
        coalesced(
          (userId, period, limit, day, units) =>
            sqliteTransaction(db, direct, () =>
              sqliteTake(userId, period, limit, day, units, holdUntil()),
            ),
          nextTurn,
        );
  const reserve = writer(() => null);
  // Reservations that hold are grouped apart from those that do not (a hit's write stays the
  // statement without holds); a group's holds expire at the latest `until` asked for.
  let heldUntil = 0;
  const reserveHeld = writer(() => heldUntil);
  const inTransaction = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
    db.isTransaction ? fn(db) : db.transaction().execute(fn);
  return {
    reserve: async (userId, period, limit, day) =>
      limit <= 0 ? null : ((await reserve(userId, period, limit, day))?.used ?? null),
    async reserveHeld(userId, period, limit, day, until) {
      if (limit <= 0) return null;
      heldUntil = Math.max(heldUntil, until);
      const share = await reserveHeld(userId, period, limit, day);
      return share === null || share.hold === undefined
        ? null
        : { used: share.used, hold: share.hold };
    },
    async release(userId, period, day) {
      if (dialect === 'postgres') await raw(PG_RELEASE, [userId, period, day ?? null]);
      else await sqliteTransaction(db, direct, () => sqliteRelease(userId, period, day));
    },
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

const toScreenshot = (row: Selectable<ScreenshotsTable>): ScreenshotRecord => ({
  id: Number(row.id),
  userId: row.user_id === null ? null : Number(row.user_id),
  token: row.token,
  ext: row.ext,
  url: row.url,
  format: row.format,
  width: row.width,
  height: row.height,
  viewportWidth: row.viewport_width,
  viewportHeight: row.viewport_height,
  fullPage: Boolean(row.full_page),
  quality: row.quality,
  deviceScaleFactor: Number(row.device_scale_factor),
  truncated: Boolean(row.truncated),
  listable: Boolean(row.listable),
  cacheKey: row.cache_key,
  targetStatus: row.target_status,
  metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as PageMetadata),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

function screenshotStore(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): ScreenshotStore {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  const remembered: RememberedRows<CachedLookupResult> | null = direct
    ? rememberedRows(direct, {
        max: REMEMBERED_LOOKUPS,
        sized: { maxSize: REMEMBERED_LOOKUP_CHARS, size: lookupChars },
      })
    : null;
  const cachedForKey = turnBatcher<CachedLookup, CachedForKeyRow | undefined>(
    hot,
    async (lookups) => {
      const rows = await raw<CachedForKeyRow & { i: number }>(
        `SELECT q.i, k.active AS key_active, s.*
           FROM unnest(?::text[], ?::bigint[], ?::bigint[], ?::bigint[])
                WITH ORDINALITY AS q(cache_key, since, now, key_id, i)
           CROSS JOIN LATERAL (SELECT COUNT(*) AS active FROM api_keys
                                WHERE id = q.key_id AND revoked_at IS NULL) k
           LEFT JOIN LATERAL (SELECT * FROM screenshots
                               WHERE cache_key = q.cache_key AND created_at >= q.since
                                 AND expires_at > q.now
                               ORDER BY created_at DESC, id DESC LIMIT 1) s ON true`,
        [
          lookups.map((l) => l.cacheKey),
          lookups.map((l) => l.since),
          lookups.map((l) => l.now),
          lookups.map((l) => l.keyId),
        ],
      );
      const byIndex = new Map(rows.map(({ i, ...row }) => [Number(i), row]));
      return lookups.map((_, index) => byIndex.get(index + 1));
    },
  );
  return {
    async insert(r) {
      const row = await db
        .insertInto('screenshots')
        .values({
          user_id: r.userId,
          token: r.token,
          ext: r.ext,
          url: r.url,
          format: r.format,
          width: r.width,
          height: r.height,
          viewport_width: r.viewportWidth,
          viewport_height: r.viewportHeight,
          full_page: r.fullPage,
          quality: r.quality,
          device_scale_factor: r.deviceScaleFactor,
          truncated: r.truncated,
          listable: r.listable,
          cache_key: r.cacheKey,
          target_status: r.targetStatus,
          metadata: r.metadata === null ? null : JSON.stringify(r.metadata),
          created_at: r.createdAt,
          expires_at: r.expiresAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toScreenshot(row);
    },
    async findCached(cacheKey, since, now) {
      const [row] = await raw<Selectable<ScreenshotsTable>>(
        `SELECT * FROM screenshots WHERE cache_key = ? AND created_at >= ? AND expires_at > ?
         ORDER BY created_at DESC, id DESC LIMIT 1`,
        [cacheKey, since, now],
      );
      return row ? toScreenshot(row) : null;
    },
    async findCachedForKey(cacheKey, since, now, keyId) {
      if (remembered && direct?.available()) {
        const newest = remembered.get(`${keyId} ${cacheKey}`, () =>
          deepFreeze(lookupOf(direct.all<CachedForKeyRow>(NEWEST_FOR_KEY, [keyId, cacheKey])[0])),
        ) as CachedLookupResult;
        const { record, keyActive } = newest;
        // The newest record is the query's answer whenever it is in the window and unexpired
        // (no older one is newer); older than the window, none is in it. Only when it has
        // expired could an older one, kept longer, still count: the query decides then.
        // The key's state comes with it either way, as from the query.
        if (record === null || record.createdAt < since) return { record: null, keyActive };
        if (record.expiresAt > now) return newest;
      }
      // One row whatever the cache holds: the key's state, and the record or nulls.
      return lookupOf(
        cachedForKey
          ? await cachedForKey.load({ cacheKey, since, now, keyId })
          : (await raw<CachedForKeyRow>(CACHED_FOR_KEY, [keyId, cacheKey, since, now]))[0],
      );
    },
    async findByToken(token) {
      const row = await db
        .selectFrom('screenshots')
        .selectAll()
        .where('token', '=', token)
        .executeTakeFirst();
      return row ? toScreenshot(row) : null;
    },
    async findForUser(userId, id, now) {
      const row = await db
        .selectFrom('screenshots')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('listable', '=', true)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return row ? toScreenshot(row) : null;
    },
    async listForUser(userId, { limit, beforeId, now }) {
      let q = db
        .selectFrom('screenshots')
        .selectAll()
        .where('user_id', '=', userId)
        .where('listable', '=', true)
        .where('expires_at', '>', now);
      if (beforeId !== null) q = q.where('id', '<', beforeId);
      const rows = await q.orderBy('id', 'desc').limit(limit).execute();
      return rows.map(toScreenshot);
    },
    async deleteForUser(userId, id) {
      const row = await db
        .deleteFrom('screenshots')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .where('listable', '=', true)
        .returningAll()
        .executeTakeFirst();
      return row ? toScreenshot(row) : null;
    },
    async claimExpired(now, limit) {
      // DELETE ... RETURNING hands each expired row to exactly one caller, on any number
      // of nodes: a row another sweeper already deleted is simply not returned.
      const ids = db
        .selectFrom('screenshots')
        .select('id')
        .where('expires_at', '<=', now)
        .limit(limit);
      const rows = await db
        .deleteFrom('screenshots')
        .where('id', 'in', ids)
        .returningAll()
        .execute();
      return rows.map(toScreenshot);
    },
    async uncache(cacheKey) {
      await db
        .updateTable('screenshots')
        .set({ cache_key: null })
        .where('cache_key', '=', cacheKey)
        .execute();
    },
    async knownTokens(tokens) {
      if (tokens.length === 0) return new Set();
      const rows = await db
        .selectFrom('screenshots')
        .select('token')
        .where('token', 'in', [...tokens])
        .execute();
      return new Set(rows.map((r) => r.token));
    },
  };
}
