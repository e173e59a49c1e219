import { AppError } from '../errors.ts';
import type { User } from '../store.ts';
import { storedKeys } from './formats.ts';
import type { CaptureContext } from './ports.ts';

/** Removes the record (so the cache can no longer return it) and then its files. */
export async function deleteScreenshot(
  ctx: Pick<CaptureContext, 'store' | 'storage'>,
  options: { user: User; id: number },
): Promise<void> {
  const deleted = await ctx.store.screenshots.deleteForUser(options.user.id, options.id);
  if (!deleted) throw new AppError('not_found', 'screenshot not found');
  await Promise.all(storedKeys(deleted).map((key) => ctx.storage.delete(key)));
}
