/**
 * `blank_image`: an image of one colour, or nearly (docs/api.md, "Warnings"). Checked at no
 * cost on most captures: an image of one colour compresses to almost nothing, so only an
 * image smaller than SUSPECT_BYTES_PER_PIXEL of its pixels is looked at, and only then are
 * its pixels counted: the PNG itself when it is small enough to decode, else a PNG of the same
 * frame taken again at a reduced scale (a JPEG or WebP is not decoded here).
 */
import { PNG } from 'pngjs';

/**
 * Below this many bytes per pixel an image may be blank. A one-colour 1280x720 PNG from
 * Chromium is a few KB (under 0.01 B/px), a JPEG or WebP some tens (JPEG keeps a few bits per
 * 8x8 block); a page with any real content is well above either.
 */
const SUSPECT_BYTES_PER_PIXEL = { png: 0.02, jpeg: 0.05, webp: 0.05 } as const;
/** Pixels of the largest PNG decoded in full (16 MB of RGBA); larger ones are sampled again. */
export const MAX_DECODED_PIXELS = 4_000_000;
/** The largest PNG taken again when the image is not decoded itself: as wide, as many pixels. */
export const SAMPLE_WIDTH = 512;
export const SAMPLE_PIXELS = 1_000_000;
/** A pixel this close to the main colour (per channel, 0-255) counts as that colour. */
const SAME_COLOUR = 16;
/** At most this share of the pixels may differ from the main colour in a blank image. */
const MAX_OTHER_SHARE = 0.001;

export type ImageKind = keyof typeof SUSPECT_BYTES_PER_PIXEL;

/** Whether an image of `bytes` for `pixels` is small enough that it may be one colour. */
export function mayBeBlank(kind: ImageKind, bytes: number, pixels: number): boolean {
  return pixels > 0 && bytes < pixels * SUSPECT_BYTES_PER_PIXEL[kind];
}

/**
 * The share of pixels that differ from the image's main colour (its most common one, alpha
 * included), or null when the PNG cannot be read. `blank` when at most MAX_OTHER_SHARE do.
 */
export function blankness(png: Buffer): { blank: boolean; colour: string; other: number } | null {
  let decoded: PNG;
  try {
    decoded = PNG.sync.read(png);
  } catch {
    return null;
  }
  const { data, width, height } = decoded;
  const pixels = width * height;
  if (pixels === 0) return null;
  // The main colour: the most common (by 16 levels a channel) among up to 4,096 pixels
  // spread over the image, as its first pixel in that bucket.
  const bucket = (i: number): number =>
    (((data[i] ?? 0) >> 4) << 12) |
    (((data[i + 1] ?? 0) >> 4) << 8) |
    (((data[i + 2] ?? 0) >> 4) << 4) |
    ((data[i + 3] ?? 0) >> 4);
  const seen = new Map<number, { n: number; first: number }>();
  const step = Math.max(1, Math.floor(pixels / 4096));
  let ref = 0;
  let best = 0;
  for (let p = 0; p < pixels; p += step) {
    const i = p * 4;
    const key = bucket(i);
    const entry = seen.get(key) ?? { n: 0, first: i };
    entry.n++;
    seen.set(key, entry);
    if (entry.n > best) {
      best = entry.n;
      ref = entry.first;
    }
  }
  const r = data[ref] ?? 0;
  const g = data[ref + 1] ?? 0;
  const b = data[ref + 2] ?? 0;
  const a = data[ref + 3] ?? 0;
  const allowed = Math.floor(pixels * MAX_OTHER_SHARE);
  let other = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (
      Math.abs((data[i] ?? 0) - r) > SAME_COLOUR ||
      Math.abs((data[i + 1] ?? 0) - g) > SAME_COLOUR ||
      Math.abs((data[i + 2] ?? 0) - b) > SAME_COLOUR ||
      Math.abs((data[i + 3] ?? 0) - a) > SAME_COLOUR
    ) {
      other++;
      // Enough to know it is not blank; the exact share is not needed.
      if (other > allowed) return { blank: false, colour: hex(r, g, b, a), other: other / pixels };
    }
  }
  return { blank: true, colour: hex(r, g, b, a), other: other / pixels };
}

function hex(r: number, g: number, b: number, a: number): string {
  const h = (n: number) => n.toString(16).padStart(2, '0');
  return a === 255 ? `#${h(r)}${h(g)}${h(b)}` : `#${h(r)}${h(g)}${h(b)}${h(a)}`;
}
