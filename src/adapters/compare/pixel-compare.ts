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
 * Rows around the changed band that pixelmatch also reads: its anti-aliasing check looks two
 * pixels away from a changed pixel (its neighbours' neighbours), so with this margin of equal
 * rows the band gives the count the whole image would.
 */
const BAND_MARGIN_ROWS = 3;

/**
 * The share of pixels that differ between two decoded images, and, when that share reaches
 * `drawAt`, the diff's pixels (RGBA, the size of the images; null when the sizes differ).
 * Only the band of rows between the first and the last that differ goes through pixelmatch
 * (rows compare as bytes, natively): a monitor's page mostly changes in a part, or not at all.
 * Pure, for the unit test.
 */
export function compareRaw(
  before: RawImage,
  after: RawImage,
  drawAt = 0,
): { changedFraction: number; diff: Uint8Array | null } {
  if (before.width !== after.width || before.height !== after.height) {
    return { changedFraction: 1, diff: null };
  }
  const { width, height } = after;
  const pixels = width * height;
  if (pixels === 0) return { changedFraction: 0, diff: null };
  const rowBytes = width * 4;
  const rows = changedRows(before.data, after.data, rowBytes, height);
  const top = rows === null ? 0 : Math.max(0, rows.first - BAND_MARGIN_ROWS);
  const bottom = rows === null ? 0 : Math.min(height, rows.last + 1 + BAND_MARGIN_ROWS);
  const band = (image: Uint8Array) => image.subarray(top * rowBytes, bottom * rowBytes);
  const bandDiff = new Uint8Array((bottom - top) * rowBytes);
  const changed =
    rows === null
      ? 0
      : pixelmatch(band(before.data), band(after.data), bandDiff, width, bottom - top, {
          threshold: PIXEL_TOLERANCE,
          alpha: DIFF_BACKGROUND_ALPHA,
          diffColor: [255, 0, 0],
        });
  const changedFraction = changed / pixels;
  if (changedFraction < drawAt) return { changedFraction, diff: null };
  // Outside the band every pixel is equal: drawn faded, as pixelmatch draws its equal pixels.
  const diff = new Uint8Array(pixels * 4);
  fadedGrey(before.data, diff, 0, top * rowBytes);
  diff.set(bandDiff, top * rowBytes);
  fadedGrey(before.data, diff, bottom * rowBytes, pixels * 4);
  return { changedFraction, diff };
}

/** The first and last rows whose bytes differ; null when none does. */
function changedRows(
  a: Uint8Array,
  b: Uint8Array,
  rowBytes: number,
  height: number,
): { first: number; last: number } | null {
  const row = (image: Uint8Array, y: number) =>
    Buffer.from(image.buffer, image.byteOffset + y * rowBytes, rowBytes);
  let first = 0;
  while (first < height && row(a, first).equals(row(b, first))) first++;
  if (first === height) return null;
  let last = height - 1;
  while (last > first && row(a, last).equals(row(b, last))) last--;
  return { first, last };
}

/** pixelmatch's drawing of an equal pixel (its luma, faded towards white), over a range. */
function fadedGrey(image: Uint8Array, out: Uint8Array, from: number, to: number): void {
  for (let i = from; i < to; i += 4) {
    const luma =
      (image[i] ?? 0) * 0.29889531 +
      (image[i + 1] ?? 0) * 0.58662247 +
      (image[i + 2] ?? 0) * 0.11448223;
    const value = 255 + ((luma - 255) * DIFF_BACKGROUND_ALPHA * (image[i + 3] ?? 0)) / 255;
    out[i] = value;
    out[i + 1] = value;
    out[i + 2] = value;
    out[i + 3] = 255;
  }
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
  const scaled = size.width !== b.width || size.height !== b.height;
  const [before, after] = await Promise.all([
    decode(task.before, scaled ? size : null),
    decode(task.after, scaled ? size : null),
  ]);
  const { changedFraction, diff } = compareRaw(before, after, task.threshold);
  if (diff === null) return { changedFraction, diff: null, ...size };
  // Fast settings: the diff is mostly one faded grey, and is encoded on every changed run
  // (bench/monitors.ts holds a comparison to a tenth of a capture's CPU).
  const png = await sharp(diff, { raw: { ...size, channels: 4 } })
    .png({ compressionLevel: 2, adaptiveFiltering: false })
    .toBuffer();
  return { changedFraction, diff: png, ...size };
}

/** Decodes an image to RGBA, scaled to `size` when given. */
async function decode(
  image: Uint8Array,
  size: { width: number; height: number } | null,
): Promise<RawImage> {
  let pipeline = sharp(image).ensureAlpha();
  if (size !== null) pipeline = pipeline.resize(size.width, size.height, { fit: 'fill' });
  const { data, info } = await pipeline.raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

/** How much lower than the service's own the comparison thread's priority is (nice). */
export const COMPARE_NICENESS = 10;

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
    // Background work: the worker's thread yields the cores to the requests' event loop
    // (and to the browser) when they want them (nice 10; piscina's optional @napi-rs/nice).
    niceIncrement: COMPARE_NICENESS,
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
