import type { ContentKind } from './formats.ts';
import type { PageMetadata } from './renderer.ts';
import type { CaptureWarning } from './warnings.ts';

/**
 * Screenshot records: the hosted images, the result cache and its lookups. A port of the domain
 * (the Kysely adapters in adapters/db serve SQLite and PostgreSQL); ../store.ts composes the
 * ports into the Store and re-exports their types.
 */
export interface ScreenshotRecord {
  id: number;
  userId: number | null;
  token: string;
  ext: string;
  url: string;
  format: string;
  /** Pixel dimensions of the stored image. */
  width: number;
  height: number;
  /** The request's viewport, full_page, quality and scale. */
  viewportWidth: number;
  viewportHeight: number;
  fullPage: boolean;
  quality: number;
  deviceScaleFactor: number;
  truncated: boolean;
  /** What may be wrong with the image (captures/warnings.ts); a cache hit answers them too. */
  warnings: CaptureWarning[];
  listable: boolean;
  /** Hash of everything that changes the image, scoped to the account; null = not cacheable. */
  cacheKey: string | null;
  targetStatus: number | null;
  /** What `metadata: true` read from the page; null without it. */
  metadata: PageMetadata | null;
  /** The page's content stored beside the image (`content`); null without it. */
  content: StoredContent | null;
  createdAt: number;
  expiresAt: number;
}

/** Which content files a record has (`${token}.html`, ...), and whether one was cut. */
export interface StoredContent {
  kinds: ContentKind[];
  truncated: boolean;
}

export type NewScreenshot = Omit<ScreenshotRecord, 'id'>;

/** A cache lookup: the newest record of `cacheKey` unexpired at `now`, created since `since`. */
export interface CacheLookup {
  cacheKey: string;
  since: number;
  now: number;
}

export interface ScreenshotStore {
  insert(record: NewScreenshot): Promise<ScreenshotRecord>;
  /** The newest unexpired record with this cache key created at or after `since`. */
  findCached(lookup: CacheLookup): Promise<ScreenshotRecord | null>;
  /**
   * The same lookup and, read in the same statement, whether API key `keyId` is still
   * unrevoked: a cached answer's key check (docs/security.md, "Revocation") costs no round
   * trip of its own.
   */
  findCachedForKey(
    lookup: CacheLookup & { keyId: number },
  ): Promise<{ record: ScreenshotRecord | null; keyActive: boolean }>;
  findByToken(token: string): Promise<ScreenshotRecord | null>;
  /** The account's listable, unexpired record with this id. */
  findForUser(userId: number, id: number, now: number): Promise<ScreenshotRecord | null>;
  /** Listable records of the account, newest first, strictly older than the cursor id. */
  listForUser(
    userId: number,
    options: { limit: number; beforeId: number | null; now: number },
  ): Promise<ScreenshotRecord[]>;
  /** Deletes the account's record; the deleted record, or null when it is not theirs. */
  deleteForUser(userId: number, id: number): Promise<ScreenshotRecord | null>;
  /** Claims (deletes) up to `limit` expired records and returns them, each exactly once. */
  claimExpired(now: number, limit: number): Promise<ScreenshotRecord[]>;
  /** Drops the cache key of records with this key so they are never served again. */
  uncache(cacheKey: string): Promise<void>;
  /** Which of these image tokens have a record (the orphan sweep asks). */
  knownTokens(tokens: readonly string[]): Promise<Set<string>>;
}
