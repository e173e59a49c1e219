import type { Clock } from '../../lib/time.ts';
import type { ImageStorage } from '../image-storage.ts';
import type { Store } from '../store.ts';
import { storedKeys } from './formats.ts';

/**
 * Deletes expired records and their images. Each record is claimed (deleted) in the
 * database first, so concurrent sweepers on several nodes never handle one twice; an
 * image whose deletion fails is logged and left for the storage's own lifecycle rules.
 */
export async function sweepExpired(
  ctx: { store: Store; storage: ImageStorage; clock: Clock },
  options: {
    batchSize?: number;
    maxBatches?: number;
    onError?: (err: unknown, key: string) => void;
  } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 200;
  const maxBatches = options.maxBatches ?? 50;
  let swept = 0;
  for (let i = 0; i < maxBatches; i++) {
    const claimed = await ctx.store.screenshots.claimExpired(ctx.clock(), batchSize);
    for (const record of claimed) {
      // The image and its content files (`content`).
      for (const key of storedKeys(record)) {
        try {
          await ctx.storage.delete(key);
        } catch (err) {
          options.onError?.(err, key);
        }
      }
    }
    swept += claimed.length;
    if (claimed.length < batchSize) break;
  }
  return swept;
}
