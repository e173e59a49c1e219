/**
 * Screenshot records (domain/store.ts `ScreenshotStore`), which are also the result cache.
 * A cache hit's lookup reads the newest record of its cache key and the key's state in one
 * statement: raw, batched per event-loop turn on PostgreSQL (hot-path.ts), and remembered
 * between requests on SQLite while nothing has changed them (remembered-rows.ts).
 */
import type { Kysely, Selectable } from 'kysely';
import type { PageMetadata } from '../../domain/captures/renderer.ts';
import type { CaptureWarning } from '../../domain/captures/warnings.ts';
import type {
  CacheLookup,
  ScreenshotRecord,
  ScreenshotStore,
  StoredContent,
} from '../../domain/store.ts';
import { deepFreeze } from '../../lib/deep-freeze.ts';
import type { DialectName } from './connect.ts';
import { type HotPath, rawRunner, turnBatcher } from './hot-path.ts';
import { type RememberedRows, rememberedRows } from './remembered-rows.ts';
import type { Database, ScreenshotsTable } from './schema.ts';

export const toScreenshot = (row: Selectable<ScreenshotsTable>): ScreenshotRecord => ({
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
  warnings: row.warnings === null ? [] : (JSON.parse(row.warnings) as CaptureWarning[]),
  content: row.content === null ? null : (JSON.parse(row.content) as StoredContent),
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** A cache lookup for an API key's request (findCachedForKey's argument). */
type CachedLookup = CacheLookup & { keyId: number };

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
  const warned = record.warnings.reduce((n, w) => n + 32 + w.message.length, 0);
  return 256 + record.url.length + warned + text.reduce((n, t) => n + (t?.length ?? 0), 0);
}

/** Cache lookups a SQLite node remembers, and the characters of their records' text. */
const REMEMBERED_LOOKUPS = 10_000;
const REMEMBERED_LOOKUP_CHARS = 4_000_000;

export function screenshotStore(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): ScreenshotStore {
  return {
    ...recordWrites(db),
    ...cacheReads(db, dialect, hot),
    ...recordReads(db),
    ...sweeps(db),
  };
}

/** A record written. */
function recordWrites(db: Kysely<Database>): Pick<ScreenshotStore, 'insert'> {
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
          warnings: r.warnings.length === 0 ? null : JSON.stringify(r.warnings),
          content: r.content === null ? null : JSON.stringify(r.content),
          created_at: r.createdAt,
          expires_at: r.expiresAt,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toScreenshot(row);
    },
  };
}

/** The cache's lookups, on the hot path: remembered on SQLite, batched per turn on PostgreSQL. */
function cacheReads(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): Pick<ScreenshotStore, 'findCached' | 'findCachedForKey'> {
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
    async findCached({ cacheKey, since, now }) {
      const [row] = await raw<Selectable<ScreenshotsTable>>(
        `SELECT * FROM screenshots WHERE cache_key = ? AND created_at >= ? AND expires_at > ?
         ORDER BY created_at DESC, id DESC LIMIT 1`,
        [cacheKey, since, now],
      );
      return row ? toScreenshot(row) : null;
    },
    async findCachedForKey(lookup) {
      const { cacheKey, since, now, keyId } = lookup;
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
          ? await cachedForKey.load(lookup)
          : (await raw<CachedForKeyRow>(CACHED_FOR_KEY, [keyId, cacheKey, since, now]))[0],
      );
    },
  };
}

/** An account's records: by token, by id, listed, deleted. */
function recordReads(
  db: Kysely<Database>,
): Pick<ScreenshotStore, 'findByToken' | 'findForUser' | 'listForUser' | 'deleteForUser'> {
  return {
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
  };
}

/** Expiry and the cache's and the orphan sweep's bookkeeping. */
function sweeps(
  db: Kysely<Database>,
): Pick<ScreenshotStore, 'claimExpired' | 'uncache' | 'knownTokens'> {
  return {
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
