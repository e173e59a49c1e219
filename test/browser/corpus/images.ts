/**
 * Pixel measures for the corpus test: comparisons between two captures of the same page, and
 * looks for blank bands, with no hand-made reference image.
 */
import { PNG } from 'pngjs';

export interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

export function decodePng(image: Buffer): Raster {
  const png = PNG.sync.read(image);
  return { width: png.width, height: png.height, data: png.data };
}

/** The largest difference of one channel (RGB) between pixel i of `a` and pixel j of `b`. */
function channelDiff(a: Raster, i: number, b: Raster, j: number): number {
  const p = i * 4;
  const q = j * 4;
  return Math.max(
    Math.abs((a.data[p] ?? 0) - (b.data[q] ?? 0)),
    Math.abs((a.data[p + 1] ?? 0) - (b.data[q + 1] ?? 0)),
    Math.abs((a.data[p + 2] ?? 0) - (b.data[q + 2] ?? 0)),
  );
}

export interface Difference {
  /** Pixels that differ by more than the tolerance in some channel, over all pixels. */
  fraction: number;
  differing: number;
  total: number;
  /** Whether the sizes differ (every pixel outside the common area counts as differing). */
  sizeDiffers: boolean;
  /** The first and last rows with a differing pixel, or null. */
  rows: [number, number] | null;
}

/**
 * The share of pixels of two images that differ by more than `tolerance` in a channel. Images
 * of different sizes are compared on their common top-left area, the rest counted as differing.
 */
export function difference(a: Raster, b: Raster, tolerance = 2): Difference {
  const width = Math.min(a.width, b.width);
  const height = Math.min(a.height, b.height);
  const total = Math.max(a.width * a.height, b.width * b.height);
  let differing = total - width * height;
  let first = -1;
  let last = -1;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (channelDiff(a, y * a.width + x, b, y * b.width + x) > tolerance) {
        differing++;
        if (first < 0) first = y;
        last = y;
      }
    }
  }
  return {
    fraction: differing / total,
    differing,
    total,
    sizeDiffers: a.width !== b.width || a.height !== b.height,
    rows: first < 0 ? null : [first, last],
  };
}

/** `image` cut to rows [top, top + height). */
export function crop(image: Raster, top: number, height: number): Raster {
  const rows = Math.max(0, Math.min(height, image.height - top));
  const start = top * image.width * 4;
  return {
    width: image.width,
    height: rows,
    data: image.data.subarray(start, start + rows * image.width * 4),
  };
}

/** `image` resampled (nearest pixel) to `width` x `height`. */
export function resample(image: Raster, width: number, height: number): Raster {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sy = Math.min(image.height - 1, Math.floor(((y + 0.5) * image.height) / height));
    for (let x = 0; x < width; x++) {
      const sx = Math.min(image.width - 1, Math.floor(((x + 0.5) * image.width) / width));
      const s = (sy * image.width + sx) * 4;
      data.set(image.data.subarray(s, s + 4), (y * width + x) * 4);
    }
  }
  return { width, height, data };
}

/**
 * Whether the rectangle is one flat colour: every second pixel of every second row within
 * `tolerance` of its top-left pixel.
 */
export function isFlat(
  image: Raster,
  rect: { x: number; y: number; width: number; height: number },
  tolerance = 4,
): boolean {
  const x0 = Math.max(0, rect.x);
  const y0 = Math.max(0, rect.y);
  const x1 = Math.min(image.width, rect.x + rect.width);
  const y1 = Math.min(image.height, rect.y + rect.height);
  const ref = y0 * image.width + x0;
  for (let y = y0; y < y1; y += 2) {
    for (let x = x0; x < x1; x += 2) {
      if (channelDiff(image, y * image.width + x, image, ref) > tolerance) return false;
    }
  }
  return true;
}

/** The indices of the horizontal bands `bandHeight` rows tall (the last may be shorter) that are one flat colour. */
export function flatBands(image: Raster, bandHeight: number): number[] {
  const flat: number[] = [];
  for (let i = 0; i * bandHeight < image.height; i++) {
    const rect = { x: 0, y: i * bandHeight, width: image.width, height: bandHeight };
    if (isFlat(image, rect)) flat.push(i);
  }
  return flat;
}

/** The runs of pixels in row `y` within `tolerance` of `rgb`: [start, length] each. */
export function runsOf(
  image: Raster,
  y: number,
  rgb: readonly [number, number, number],
  tolerance = 12,
): [number, number][] {
  const runs: [number, number][] = [];
  let start = -1;
  for (let x = 0; x <= image.width; x++) {
    const i = (y * image.width + x) * 4;
    const match =
      x < image.width &&
      Math.abs((image.data[i] ?? 0) - rgb[0]) <= tolerance &&
      Math.abs((image.data[i + 1] ?? 0) - rgb[1]) <= tolerance &&
      Math.abs((image.data[i + 2] ?? 0) - rgb[2]) <= tolerance;
    if (match && start < 0) start = x;
    if (!match && start >= 0) {
      runs.push([start, x - start]);
      start = -1;
    }
  }
  return runs;
}

/** The share of the rectangle's pixels within `tolerance` of `rgb`. */
export function shareOf(
  image: Raster,
  rect: { x: number; y: number; width: number; height: number },
  rgb: readonly [number, number, number],
  tolerance = 12,
): number {
  let match = 0;
  let total = 0;
  for (let y = Math.max(0, rect.y); y < Math.min(image.height, rect.y + rect.height); y++) {
    for (let x = Math.max(0, rect.x); x < Math.min(image.width, rect.x + rect.width); x++) {
      const i = (y * image.width + x) * 4;
      total++;
      if (
        Math.abs((image.data[i] ?? 0) - rgb[0]) <= tolerance &&
        Math.abs((image.data[i + 1] ?? 0) - rgb[1]) <= tolerance &&
        Math.abs((image.data[i + 2] ?? 0) - rgb[2]) <= tolerance
      ) {
        match++;
      }
    }
  }
  return total === 0 ? 0 : match / total;
}

/** A percentage with three decimals, for messages. */
export const pct = (fraction: number): string => `${(fraction * 100).toFixed(3)}%`;
