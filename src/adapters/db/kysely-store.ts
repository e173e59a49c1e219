import type { Kysely, Selectable } from 'kysely';
import type { PageMetadata } from '../../domain/captures/renderer.ts';
import type { PlanName } from '../../domain/plans.ts';
import type {
  ApiKeyRecord,
  KeyStore,
  ScreenshotRecord,
  ScreenshotStore,
  SessionStore,
  Store,
  User,
  UserStore,
} from '../../domain/store.ts';
import { deepFreeze } from '../../lib/deep-freeze.ts';
import { billingStore } from './billing-store.ts';
import type { DialectName } from './connect.ts';
import { type HotPath, rawRunner, turnBatcher } from './hot-path.ts';
import { jobStore, webhookStore } from './job-store.ts';
import { lockUser } from './lock-user.ts';
import { quotaStore } from './quota-store.ts';
import { type RememberedRows, rememberedRows } from './remembered-rows.ts';
import type { ApiKeysTable, Database, ScreenshotsTable, UsersTable } from './schema.ts';

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
