import { generateApiKey } from '../api-key-format.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { ApiKeyRecord } from '../store.ts';

/** Creates a key; the plaintext is returned here and never again. */
export async function createKey(
  ctx: DomainContext,
  options: { userId: number; name?: string | undefined },
): Promise<ApiKeyRecord & { key: string }> {
  const name = (options.name ?? '').trim() || 'default';
  if (name.length > BOUNDS.account.keyNameMax) {
    throw new AppError(
      'invalid_request',
      `name must be at most ${BOUNDS.account.keyNameMax} characters`,
    );
  }
  const { key, prefix, hash } = generateApiKey();
  const created = await ctx.store.keys.createWithinLimit({
    userId: options.userId,
    name,
    prefix,
    keyHash: hash,
    now: ctx.clock(),
    maxActive: BOUNDS.account.maxActiveKeys,
  });
  if (created === 'limit_reached') {
    throw new AppError(
      'invalid_request',
      `key limit reached (${BOUNDS.account.maxActiveKeys} active keys)`,
    );
  }
  return { ...created, key };
}
