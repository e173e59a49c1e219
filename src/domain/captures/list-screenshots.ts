import { AppError } from '../errors.ts';
import type { ScreenshotRecord, User } from '../store.ts';
import type { CaptureContext } from './ports.ts';

/** Cursors are opaque to clients: base64url of the last id seen. */
export const encodeCursor = (id: number): string => Buffer.from(`id:${id}`).toString('base64url');

export function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64url').toString();
  const match = /^id:([1-9][0-9]{0,15})$/.exec(text);
  if (!match)
    throw new AppError('invalid_request', 'cursor is not a value returned by this endpoint');
  return Number(match[1]);
}

/** The account's listable records, newest first. Free accounts have none (no records). */
export async function listScreenshots(
  ctx: Pick<CaptureContext, 'store' | 'plans' | 'clock'>,
  options: { user: User; limit: number; cursor: string | undefined },
): Promise<{ items: ScreenshotRecord[]; nextCursor: string | null }> {
  const beforeId = options.cursor ? decodeCursor(options.cursor) : null;
  if (!ctx.plans[options.user.plan].listable) return { items: [], nextCursor: null };
  const rows = await ctx.store.screenshots.listForUser(options.user.id, {
    limit: options.limit + 1,
    beforeId,
    now: ctx.clock(),
  });
  const items = rows.slice(0, options.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > options.limit && last ? encodeCursor(last.id) : null };
}
