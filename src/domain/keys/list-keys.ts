import type { DomainContext } from '../context.ts';
import type { ApiKeyRecord } from '../store.ts';

/** Active keys, newest first; prefix and metadata only. */
export function listKeys(ctx: DomainContext, options: { userId: number }): Promise<ApiKeyRecord[]> {
  return ctx.store.keys.listActive(options.userId);
}
