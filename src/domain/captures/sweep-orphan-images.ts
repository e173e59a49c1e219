import type { Clock } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';
import type { ImageStorage } from '../image-storage.ts';
import type { Store } from '../store.ts';

/**
 * Deletes stored images that no record points to (docs/deployment.md,
 * "When a dependency fails"): an upload that timed out but landed (a hung object store that
 * resumed), a node that died between an image and its record, an expired record whose image
 * could not be deleted. Only images older than `minAgeMs` are judged, so an image whose
 * record is being written right now is never taken for an orphan, and only images this
 * deployment wrote (`ImageStorage.owns`: a bucket may be shared). How many it deleted; a
 * deletion that fails is left for the next sweep.
 */
export async function sweepOrphanImages(
  ctx: { store: Store; storage: ImageStorage; clock: Clock },
  options: {
    minAgeMs: number;
    pageSize?: number;
    maxPages?: number;
    /**
     * Where the last sweep stopped when it ran out of pages, kept between sweeps: a large
     * bucket is walked to its end over several sweeps instead of its first pages each time.
     */
    resume?: { cursor: string | null };
    onError?: (err: unknown, key: string) => void;
  },
): Promise<number> {
  const olderThan = new Date(ctx.clock() - options.minAgeMs);
  const limit = options.pageSize ?? BOUNDS.storage.orphanSweepPageSize;
  let cursor: string | null = options.resume?.cursor ?? null;
  let deleted = 0;
  for (let page = 0; page < (options.maxPages ?? 1_000); page++) {
    const { keys, next }: { keys: string[]; next: string | null } = await ctx.storage.list({
      olderThan,
      cursor,
      limit,
    });
    const tokenOf = (key: string) => key.slice(0, key.lastIndexOf('.'));
    const known = await ctx.store.screenshots.knownTokens(keys.map(tokenOf));
    for (const key of keys) {
      if (known.has(tokenOf(key))) continue;
      try {
        // Another deployment's image in a shared bucket, or one written before tags were:
        // not ours to judge.
        if (!(await ctx.storage.owns(key))) continue;
        await ctx.storage.delete(key);
        deleted++;
      } catch (err) {
        options.onError?.(err, key);
      }
    }
    cursor = next;
    if (next === null) break;
  }
  if (options.resume) options.resume.cursor = cursor;
  return deleted;
}
