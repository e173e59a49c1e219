/**
 * A monitor's change detection (docs/api.md, "Monitors"): pixelmatch over the raw RGBA of two
 * captures. pixelmatch because it ignores anti-aliasing (a font hinted one pixel differently
 * between two renders is not a change), compares in a perceptual colour space with a
 * tolerance, and writes the diff image itself; a plain byte comparison would call every
 * re-render of a page with text "changed". Images are decoded with sharp, which reads every
 * format a monitor may capture (PNG, JPEG, WebP).
 *
 * The work runs in a worker thread, never on the event loop: a full-page monitor of a tall
 * page is tens of megapixels, seconds of decoding and comparing that would stall every request
 * on the node (docs/security.md, "Hostile pages"). Piscina keeps that one worker (a pool of
 * one: comparisons on a node run one at a time, so one comparison's memory is the bound) and
 * lets it go when idle; it is the Node project's own worker pool, with queueing, transfer of
 * buffers, cancellation and replacement of a worker that dies, none of which we write here.
 * Images over `maxPixels` are compared scaled down to it, so memory and time are bounded
 * whatever MAX_IMAGE_PIXELS allows.
 */
import { Piscina } from 'piscina';
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import { BOUNDS } from '../../domain/bounds.ts';
import type { ImageComparer, ImageComparison } from '../../domain/monitors/ports.ts';

/** Decoded RGBA pixels, 4 bytes a pixel, row by row. */
export interface RawImage {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * pixelmatch's colour tolerance per pixel (0 to 1; its default 0.1): lossy formats re-encode
 * the same page with small colour shifts that must not count.
 */
const PIXEL_TOLERANCE = 0.1;
/** How much of the new image shows under the marks in the diff (a faded greyscale copy). */
const DIFF_BACKGROUND_ALPHA = 0.2;

/**
 * The share of pixels that differ between two decoded images, and the diff's pixels (RGBA,
 * the size of the images) when they are the same size. Pure, for the unit test.
 */
export function compareRaw(
  before: RawImage,
  after: RawImage,
): { changedFraction: number; diff: Uint8Array | null } {
  if (before.width !== after.width || before.height !== after.height) {
    return { changedFraction: 1, diff: null };
  }
  const { width, height } = after;
  const pixels = width * height;
  if (pixels === 0) return { changedFraction: 0, diff: null };
  const diff = new Uint8Array(pixels * 4);
  const changed = pixelmatch(before.data, after.data, diff, width, height, {
    threshold: PIXEL_TOLERANCE,
    alpha: DIFF_BACKGROUND_ALPHA,
    diffColor: [255, 0, 0],
  });
  return { changedFraction: changed / pixels, diff };
}

/**
 * The size two images are compared at: their own, or scaled down (aspect kept) to at most
 * `maxPixels`. Pure, for the unit test.
 */
export function comparedSize(
  width: number,
  height: number,
  maxPixels: number,
): { width: number; height: number } {
  if (width * height <= maxPixels) return { width, height };
  const scale = Math.sqrt(maxPixels / (width * height));
  // A side that would be under one pixel is one, and the other alone keeps within the bound.
  if (width * scale < 1) return { width: 1, height: Math.min(height, Math.floor(maxPixels)) };
  if (height * scale < 1) return { width: Math.min(width, Math.floor(maxPixels)), height: 1 };
  return { width: Math.floor(width * scale), height: Math.floor(height * scale) };
}

/** What one comparison is given and gives back (across the worker's boundary). */
export interface CompareTask {
  before: Uint8Array;
  after: Uint8Array;
  threshold: number;
  maxPixels: number;
}

export interface CompareResult {
  changedFraction: number;
  diff: Uint8Array | null;
  /** The size compared at (smaller than the images' when they were over maxPixels). */
  width: number;
  height: number;
}

/**
 * Decodes, compares and draws the diff of two encoded images: the work itself, which
 * compare-worker.ts runs off the event loop.
 */
export async function compareEncoded(task: CompareTask): Promise<CompareResult> {
  const [a, b] = await Promise.all([sharp(task.before).metadata(), sharp(task.after).metadata()]);
  if (a.width !== b.width || a.height !== b.height) {
    return { changedFraction: 1, diff: null, width: b.width, height: b.height };
  }
  const size = comparedSize(b.width, b.height, task.maxPixels);
  const [before, after] = await Promise.all([decode(task.before, size), decode(task.after, size)]);
  const { changedFraction, diff } = compareRaw(before, after);
  if (diff === null || changedFraction < task.threshold) {
    return { changedFraction, diff: null, ...size };
  }
  // Fast settings: the diff is mostly one faded grey, and is encoded on every changed run
  // (bench/monitors.ts holds a comparison to a tenth of a capture's CPU).
  const png = await sharp(diff, { raw: { ...size, channels: 4 } })
    .png({ compressionLevel: 2, adaptiveFiltering: false })
    .toBuffer();
  return { changedFraction, diff: png, ...size };
}

async function decode(
  image: Uint8Array,
  size: { width: number; height: number },
): Promise<RawImage> {
  let pipeline = sharp(image).ensureAlpha();
  const meta = await sharp(image).metadata();
  if (meta.width !== size.width || meta.height !== size.height) {
    pipeline = pipeline.resize(size.width, size.height, { fit: 'fill' });
  }
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

export interface ImageComparerOptions {
  /** Images over this are compared scaled down to it (BOUNDS.monitors.compareMaxPixels). */
  maxPixels?: number;
  /** A comparison that takes longer is ended, its worker replaced (compareTimeoutMs). */
  timeoutMs?: number;
}

/** The comparer, with its worker pool; close() ends the worker. */
export interface ClosableImageComparer extends ImageComparer {
  close(): Promise<void>;
}

export function createImageComparer(options: ImageComparerOptions = {}): ClosableImageComparer {
  const maxPixels = options.maxPixels ?? BOUNDS.monitors.compareMaxPixels;
  const timeoutMs = options.timeoutMs ?? BOUNDS.monitors.compareTimeoutMs;
  const pool = new Piscina<CompareTask, CompareResult>({
    filename: new URL('./compare-worker.ts', import.meta.url).href,
    name: 'compare',
    minThreads: 0,
    maxThreads: 1,
    // Idle workers go, and with them the memory of the last comparison.
    idleTimeout: BOUNDS.monitors.compareIdleMs,
  });
  return {
    async compare(before, after, { threshold }): Promise<ImageComparison> {
      const run = (task: CompareTask, transfer: boolean) =>
        pool.run(task, {
          ...(transfer
            ? {
                transferList: [task.before.buffer as ArrayBuffer, task.after.buffer as ArrayBuffer],
              }
            : {}),
          signal: AbortSignal.timeout(timeoutMs),
        });
      const task = { before: owned(before), after: owned(after), threshold, maxPixels };
      const result = await run(task, task.before.buffer !== task.after.buffer).catch(
        (err: unknown) => {
          // Memory Node does not own (a buffer made by a native module) cannot be moved:
          // such images are sent as copies.
          if (!(err instanceof Error) || err.name !== 'DataCloneError') throw err;
          return run(
            { ...task, before: new Uint8Array(before), after: new Uint8Array(after) },
            false,
          );
        },
      );
      const diff = result.diff;
      return {
        changedFraction: result.changedFraction,
        diff: diff === null ? null : Buffer.from(diff.buffer, diff.byteOffset, diff.byteLength),
      };
    },
    close: () => pool.destroy(),
  };
}

/**
 * The bytes on an ArrayBuffer of their own, so that they can be handed to the worker without
 * a copy on the event loop (the caller's buffer is detached). A view of a larger buffer (Node's
 * pool of small buffers, a slice) is copied: small, or rare.
 */
function owned(image: Buffer): Uint8Array {
  if (image.byteOffset === 0 && image.byteLength === image.buffer.byteLength) {
    return new Uint8Array(image.buffer, 0, image.byteLength);
  }
  return new Uint8Array(image);
}
