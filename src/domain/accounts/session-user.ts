import { sha256Hex } from '../../lib/crypto.ts';
import type { DomainContext } from '../context.ts';
import type { User } from '../store.ts';

/** The user behind a session cookie value, or null. */
export async function sessionUser(
  ctx: DomainContext,
  options: { token: string },
): Promise<User | null> {
  // Tokens are 43 base64url characters; anything else cannot be ours, so skip the read.
  if (!/^[A-Za-z0-9_-]{43}$/.test(options.token)) return null;
  return ctx.store.sessions.findUser(sha256Hex(options.token), ctx.clock());
}
