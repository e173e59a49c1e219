import { safeEqual } from '../../lib/crypto.ts';
import { hashApiKey, isWellFormedApiKey } from '../api-key-format.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { ApiKeyRecord, User } from '../store.ts';

const UNAUTHORIZED = () => new AppError('unauthorized', 'unauthorized');

/**
 * Resolves an `X-API-Key` value to its account. Malformed keys (wrong shape or checksum)
 * are refused without touching the database. The row is read on every request, so a
 * revocation is seen by the very next one.
 */
export async function authenticateKey(
  ctx: DomainContext,
  options: { key: string | undefined },
): Promise<{ key: ApiKeyRecord; user: User }> {
  const key = options.key;
  if (key === undefined || !isWellFormedApiKey(key)) throw UNAUTHORIZED();
  const hash = hashApiKey(key);
  const found = await ctx.store.keys.findActiveByHash(hash);
  // The lookup is by hash; the comparison keeps even that step constant-time.
  if (!found || !safeEqual(found.keyHash, hash)) throw UNAUTHORIZED();
  touchKey(ctx, found.key);
  return { key: found.key, user: found.user };
}

/** Notes the key's use in last_used_at, at most once per keyTouchIntervalMs. */
export function touchKey(ctx: DomainContext, key: ApiKeyRecord): void {
  const now = ctx.clock();
  if (key.lastUsedAt === null || now - key.lastUsedAt >= BOUNDS.account.keyTouchIntervalMs) {
    // Best effort and off the request path: a failed write only delays last_used_at.
    ctx.store.keys.touch(key.id, now, BOUNDS.account.keyTouchIntervalMs).catch(() => {});
  }
}
