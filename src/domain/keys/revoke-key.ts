import type { DomainContext } from '../context.ts';
import { AppError } from '../errors.ts';
import type { RevocationBus } from '../revocations.ts';

/**
 * Revokes a key of the account. The next request with it is refused because
 * authentication always reads the key row; in-flight captures learn it from the bus.
 */
export async function revokeKey(
  ctx: DomainContext & { revocations: RevocationBus },
  options: { userId: number; keyId: number },
): Promise<void> {
  const revoked = await ctx.store.keys.revoke(options.userId, options.keyId, ctx.clock());
  if (!revoked) throw new AppError('not_found', 'api key not found');
  await ctx.revocations.publish(options.keyId);
}
