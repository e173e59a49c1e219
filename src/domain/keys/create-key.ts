import { generateApiKey } from '../api-key-format.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { ApiKeyRecord } from '../store.ts';
import { newSigningNonce, signingSecret } from './signing-secret.ts';

/** Creates a key; the plaintext and its signing secret are returned here and never again. */
export async function createKey(
  ctx: DomainContext,
  options: { userId: number; name?: string | undefined },
): Promise<ApiKeyRecord & { key: string; signingSecret: string }> {
  const name = (options.name ?? '').trim() || 'default';
  if (name.length > BOUNDS.account.keyNameMax) {
    throw new AppError(
      'invalid_request',
      `name must be at most ${BOUNDS.account.keyNameMax} characters`,
    );
  }
  const { key, prefix, hash } = generateApiKey();
  const signingNonce = newSigningNonce();
  const created = await ctx.store.keys.createWithinLimit({
    userId: options.userId,
    name,
    prefix,
    keyHash: hash,
    signingNonce,
    now: ctx.clock(),
    maxActive: BOUNDS.account.maxActiveKeys,
  });
  if (created === 'limit_reached') {
    throw new AppError(
      'invalid_request',
      `key limit reached (${BOUNDS.account.maxActiveKeys} active keys)`,
    );
  }
  return { ...created, key, signingSecret: signingSecret(ctx.secrets, created.id, signingNonce) };
}
