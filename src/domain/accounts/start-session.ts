import { randomToken, sha256Hex } from '../../lib/crypto.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';

/**
 * A fresh server-side session: the cookie carries 256 random bits, the database only their
 * SHA-256, so a leaked database row cannot be replayed as a cookie.
 */
export async function startSession(
  ctx: DomainContext,
  options: { userId: number },
): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken(32);
  const now = ctx.clock();
  const expiresAt = now + BOUNDS.account.sessionLifetimeMs;
  await ctx.store.sessions.create({
    idHash: sha256Hex(token),
    userId: options.userId,
    now,
    expiresAt,
  });
  return { token, expiresAt };
}
