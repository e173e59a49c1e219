import { sha256Hex } from '../../lib/crypto.ts';
import type { DomainContext } from '../context.ts';

export async function logOut(ctx: DomainContext, options: { token: string }): Promise<void> {
  await ctx.store.sessions.delete(sha256Hex(options.token));
}
