import type { QueryPair } from '../../lib/signed-query.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { ApiKeyRecord, User } from '../store.ts';
import { touchKey } from './authenticate-key.ts';
import { signatureMatches, signingSecret } from './signing-secret.ts';

/** The parameters a link carries besides the capture's options. */
export const LINK_PARAMS = ['key_id', 'expires', 'signature'] as const;

const UNAUTHORIZED = () => new AppError('unauthorized', 'unauthorized');
const SIGNATURE_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Checks a signed render link (docs/api.md, "Signed render links") and resolves it to its key
 * and account. `expires` missing, malformed or too far ahead is a 400 naming it (the link's
 * author can fix it); everything else wrong (no such key, a revoked key, a key without a
 * signing secret, a signature that does not match, an expired link) is the same bare 401, so
 * a stranger learns nothing about which part failed. The signature is checked before the
 * expiry, and in constant time.
 */
export async function authenticateRenderLink(
  ctx: DomainContext,
  pairs: readonly QueryPair[],
): Promise<{ key: ApiKeyRecord; user: User; expiresAt: number }> {
  const single = (name: (typeof LINK_PARAMS)[number]): string | undefined => {
    const values = pairs.filter(([n]) => n === name);
    if (values.length > 1) throw new AppError('invalid_request', `${name} is given more than once`);
    return values[0]?.[1];
  };
  const expiresText = single('expires');
  if (expiresText === undefined) {
    throw new AppError('invalid_request', 'expires is required (Unix seconds)');
  }
  if (!/^[0-9]{1,12}$/.test(expiresText)) {
    throw new AppError('invalid_request', 'expires must be a whole number of Unix seconds');
  }
  const expiresAt = Number(expiresText) * 1000;
  const now = ctx.clock();
  const maxAhead = BOUNDS.links.maxLifetimeSeconds;
  if (expiresAt > now + maxAhead * 1000) {
    throw new AppError(
      'invalid_request',
      `expires must be at most ${maxAhead} seconds (7 days) ahead`,
    );
  }
  const keyIdText = single('key_id');
  const signature = single('signature');
  if (keyIdText === undefined || !/^[1-9][0-9]{0,15}$/.test(keyIdText)) throw UNAUTHORIZED();
  if (signature === undefined || !SIGNATURE_PATTERN.test(signature)) throw UNAUTHORIZED();
  const keyId = Number(keyIdText);
  if (!Number.isSafeInteger(keyId)) throw UNAUTHORIZED();
  const found = await ctx.store.keys.findActiveById(keyId);
  if (!found || found.signingNonce === null) throw UNAUTHORIZED();
  const secret = signingSecret(ctx.secrets, keyId, found.signingNonce);
  if (!signatureMatches(secret, pairs, signature)) throw UNAUTHORIZED();
  if (expiresAt <= now) throw UNAUTHORIZED();
  touchKey(ctx, found.key);
  return { key: found.key, user: found.user, expiresAt };
}
