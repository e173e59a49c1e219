import { generateApiKey } from '../api-key-format.ts';
import { ACCOUNT_LIMITS, type DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { ApiKeyRecord } from '../store.ts';

/** Creates a key; the plaintext is returned here and never again. */
export async function createKey(
  ctx: DomainContext,
  options: { userId: number; name?: string | undefined },
): Promise<ApiKeyRecord & { key: string }> {
  const name = (options.name ?? '').trim() || 'default';
  if (name.length > ACCOUNT_LIMITS.keyNameMax) {
    throw new AppError(
      'invalid_request',
      `name must be at most ${ACCOUNT_LIMITS.keyNameMax} characters`,
    );
  }
  const { key, prefix, hash } = generateApiKey();
  const created = await ctx.store.keys.createWithinLimit({
    userId: options.userId,
    name,
    prefix,
    keyHash: hash,
    now: ctx.clock(),
    maxActive: ACCOUNT_LIMITS.maxActiveKeys,
  });
  if (created === 'limit_reached') {
    throw new AppError(
      'invalid_request',
      `key limit reached (${ACCOUNT_LIMITS.maxActiveKeys} active keys)`,
    );
  }
  return { ...created, key };
}
