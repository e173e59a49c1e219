import { bytesToBase62, randomBase62, safeEqual } from '../../lib/crypto.ts';
import type { SecretDeriver } from '../../lib/server-secret.ts';
import { type QueryPair, signQuery } from '../../lib/signed-query.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';

/**
 * A key's signing secret, for signed render links: `sig_live_` + 43 base62 characters (256
 * bits). It is derived, not stored (docs/security.md, "Signing secrets"): HMAC-SHA256 of the
 * server secret over the key's id and a random nonce kept on the key's row. So it can be
 * checked on every link yet shown only once, a copy of the database alone recreates none,
 * and a new nonce replaces it.
 */
export const SIGNING_SECRET_PREFIX = 'sig_live_';
const SECRET_DIGITS = 43; // 62^43 > 2^256
const NONCE_LENGTH = 22; // about 131 bits

export const newSigningNonce = (): string => randomBase62(NONCE_LENGTH);

export function signingSecret(secrets: SecretDeriver, keyId: number, nonce: string): string {
  const bytes = secrets.derive('api-key-signing-secret', keyId, nonce);
  return `${SIGNING_SECRET_PREFIX}${bytesToBase62(bytes, SECRET_DIGITS)}`;
}

/** Whether `signature` is the link's, signed with this secret (constant-time). */
export function signatureMatches(
  secret: string,
  pairs: readonly QueryPair[],
  signature: string,
): boolean {
  return safeEqual(signQuery(secret, pairs), signature);
}

/**
 * A new signing secret for an active key of the account: links signed with the old one are
 * refused from now on. The secret is returned here and never again.
 */
export async function replaceSigningSecret(
  ctx: DomainContext,
  options: { userId: number; keyId: number },
): Promise<string> {
  const nonce = newSigningNonce();
  const replaced = await ctx.store.keys.setSigningNonce(options.userId, options.keyId, nonce);
  if (!replaced) throw new AppError('not_found', 'api key not found');
  return signingSecret(ctx.secrets, options.keyId, nonce);
}
