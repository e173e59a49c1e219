import { CompiledQuery, type Kysely, type Selectable, sql } from 'kysely';
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
import { billingStore } from './billing-store.ts';
import type { DialectName } from './connect.ts';
import type { ApiKeysTable, Database, ScreenshotsTable, UsersTable } from './schema.ts';

/**
 * The hot path (every authenticated request, every cache hit) skips Kysely's query builder:
 * building and compiling took about a third of a cache-hit request. These few statements
 * are plain SQL valid on both dialects, `?` placeholders rewritten to `$n` for PostgreSQL.
 */
function rawRunner(db: Kysely<Database>, dialect: DialectName) {
  const texts = new Map<string, string>();
  return async <R>(text: string, params: unknown[]): Promise<R[]> => {
    let sqlText = texts.get(text);
    if (sqlText === undefined) {
      let n = 0;
      sqlText = dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
      texts.set(text, sqlText);
    }
    const result = await db.executeQuery<R>(CompiledQuery.raw(sqlText, params));
    return result.rows;
  };
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

function keyStore(db: Kysely<Database>, dialect: DialectName): KeyStore {
  const raw = rawRunner(db, dialect);
  return {
    async createWithinLimit({ userId, name, prefix, keyHash, now, maxActive }) {
      return db.transaction().execute(async (trx) => {
        // Serialise key creation per account so two concurrent creates cannot both pass
        // the count (SQLite transactions are already serial).
        if (dialect === 'postgres') {
          await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
        }
        const { n } = await trx
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxActive) return 'limit_reached' as const;
        const row = await trx
          .insertInto('api_keys')
          .values({ user_id: userId, name, prefix, key_hash: keyHash, created_at: now })
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
      const [row] = await raw<
        Selectable<ApiKeysTable> & { email: string; plan: string; user_created_at: number }
      >(
        `SELECT k.id, k.user_id, k.name, k.prefix, k.key_hash, k.created_at, k.last_used_at,
                k.revoked_at, u.email, u.plan, u.created_at AS user_created_at
           FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
        [keyHash],
      );
      if (!row) return null;
      return {
        key: toKey(row),
        keyHash: row.key_hash,
        user: toUser({
          id: row.user_id,
          email: row.email,
          plan: row.plan,
          created_at: row.user_created_at,
        }),
      };
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

export function createKyselyStore(db: Kysely<Database>, dialect: DialectName): Store {
  const store: Store = {
    users: userStore(db),
    sessions: sessionStore(db),
    keys: keyStore(db, dialect),
    quota: quotaStore(db, dialect),
    screenshots: screenshotStore(db, dialect),
    billing: billingStore(db, dialect),
    // Inside a transaction the store already runs in it (Kysely does not nest them).
    transaction: (fn) =>
      db.isTransaction
        ? fn(store)
        : db.transaction().execute((trx) => fn(createKyselyStore(trx, dialect))),
  };
  return store;
}

function quotaStore(db: Kysely<Database>, dialect: DialectName): QuotaStore {
  const raw = rawRunner(db, dialect);
  return {
    async reserve(userId, period, limit) {
      if (limit <= 0) return null;
      // One statement: insert the month's first unit, or add one while under the limit.
      const [row] = await raw<{ used: number }>(
        `INSERT INTO usage_months (user_id, period, used) VALUES (?, ?, 1)
         ON CONFLICT (user_id, period) DO UPDATE SET used = usage_months.used + 1
         WHERE usage_months.used < ? RETURNING used`,
        [userId, period, limit],
      );
      return row ? Number(row.used) : null;
    },
    async release(userId, period) {
      await db
        .updateTable('usage_months')
        .set({ used: sql<number>`used - 1` })
        .where('user_id', '=', userId)
        .where('period', '=', period)
        .where('used', '>', 0)
        .execute();
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
    async countDay(userId, day) {
      await raw(
        `INSERT INTO usage_days (user_id, day, count) VALUES (?, ?, 1)
         ON CONFLICT (user_id, day) DO UPDATE SET count = usage_days.count + 1`,
        [userId, day],
      );
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
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

function screenshotStore(db: Kysely<Database>, dialect: DialectName): ScreenshotStore {
  const raw = rawRunner(db, dialect);
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
    async findByToken(token) {
      const row = await db
        .selectFrom('screenshots')
        .selectAll()
        .where('token', '=', token)
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
  };
}
