/**
 * `blank_image`: an image of one colour, or nearly (docs/api.md, "Warnings"). Checked at no
 * cost on most captures: an image of one colour compresses to almost nothing, so only an
 * image smaller than SUSPECT_BYTES_PER_PIXEL of its pixels is looked at: a PNG read row by row
 * until it is plainly not blank, anything else on a smaller PNG of the same frame
 * (capture-warnings.ts).
 */
import { constants, inflateSync } from 'node:zlib';
import { PNG } from 'pngjs';

/**
 * Below this many bytes per pixel an image may be blank. A one-colour 1280x720 PNG from
 * Chromium is a few KB (under 0.01 B/px), a JPEG or WebP some tens (JPEG keeps a few bits per
 * 8x8 block); a page with any real content is well above either.
 */
const SUSPECT_BYTES_PER_PIXEL = { png: 0.02, jpeg: 0.05, webp: 0.05 } as const;
/** The largest PNG read itself (16 MB of RGBA); a larger one, or a JPEG or WebP, is sampled. */
export const MAX_READ_PIXELS = 4_000_000;
/**
 * The sample: the same frame taken again as a PNG at most this wide and of at most this many
 * pixels (Chromium scales it down: a line of text still shows as a few grey pixels).
 */
export const SAMPLE_WIDTH = 512;
export const SAMPLE_PIXELS = 262_144;
/** A pixel this close to the main colour (per channel, 0-255) counts as that colour. */
const SAME_COLOUR = 16;
/** At most this share of the pixels may differ from the main colour in a blank image. */
const MAX_OTHER_SHARE = 0.001;

export type ImageKind = keyof typeof SUSPECT_BYTES_PER_PIXEL;

/** Whether an image of `bytes` for `pixels` is small enough that it may be one colour. */
export function mayBeBlank(kind: ImageKind, bytes: number, pixels: number): boolean {
  return pixels > 0 && bytes < pixels * SUSPECT_BYTES_PER_PIXEL[kind];
}

/** What a blank check found: whether the image is blank, its main colour, the share differing. */
export interface Blankness {
  blank: boolean;
  colour: string;
  other: number;
}

/**
 * Whether a PNG is one colour, or nearly: at most MAX_OTHER_SHARE of its pixels differ from
 * its main colour (the most common one, alpha included) by more than SAME_COLOUR. null when
 * the PNG cannot be read.
 *
 * Chromium's PNGs (8-bit RGB or RGBA, not interlaced) are read row by row against the first
 * pixel's colour, inflating a growing prefix of the data at a time, and the scan stops as soon
 * as enough pixels both match and differ from that colour that no colour can hold all but
 * MAX_OTHER_SHARE of the image: a page with content near its top costs a few rows, not the
 * megabytes of its whole image (which the collector would then have to take back). Any other
 * PNG, and the rare image whose first pixel is not its main colour, is decoded whole.
 */
export function blankness(png: Buffer): Blankness | null {
  const fast = scanRows(png);
  if (fast !== undefined) return fast;
  let decoded: PNG;
  try {
    decoded = PNG.sync.read(png);
  } catch {
    return null;
  }
  return blanknessOf(decoded.data, decoded.width * decoded.height);
}

/** Compressed bytes inflated first; each further try inflates twice as many. */
const FIRST_PREFIX = 512;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The row scan (see blankness); undefined when it cannot tell and the image is decoded whole. */
function scanRows(png: Buffer): Blankness | null | undefined {
  if (png.length < 33 || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  let width = 0;
  let height = 0;
  let bpp = 0;
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colourType, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colourType !== 2 && colourType !== 6)) {
        return undefined;
      }
      bpp = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    } else if (type === 'IEND') {
      break;
    }
    at += 12 + length;
  }
  if (bpp === 0 || width === 0 || height === 0) return null;
  const compressed = idat.length === 1 ? (idat[0] as Buffer) : Buffer.concat(idat);
  const stride = width * bpp;
  const pixels = width * height;
  const allowed = Math.floor(pixels * MAX_OTHER_SHARE);
  let prev = Buffer.alloc(stride);
  let row = Buffer.alloc(stride);
  const zeros = Buffer.alloc(stride);
  const ref = new Uint8Array([0, 0, 0, 255]);
  let other = 0;
  let same = 0;
  // The last row's count of pixels differing from the first pixel's colour: a row equal to
  // the one above it (most of a page that may be blank) is counted without a look at its
  // pixels, and an "up" row of zeros (the encoder's way to repeat the row above) is not even
  // unfiltered.
  let rowOther = 0;
  let y = 0;
  for (let prefix = FIRST_PREFIX; y < height; prefix *= 2) {
    const whole = prefix >= compressed.length;
    let raw: Buffer;
    try {
      raw = whole
        ? inflateSync(compressed)
        : inflateSync(compressed.subarray(0, prefix), { finishFlush: constants.Z_SYNC_FLUSH });
    } catch {
      return null;
    }
    const rows = Math.min(height, Math.floor(raw.length / (stride + 1)));
    if (whole && rows < height) return null;
    for (; y < rows; y++) {
      const start = y * (stride + 1);
      const filter = raw[start] ?? 255;
      const line = raw.subarray(start + 1, start + 1 + stride);
      const repeats = y > 0 && filter === 2 && line.equals(zeros);
      if (!repeats) {
        if (!unfilter(filter, line, prev, row, bpp)) return null;
        if (y === 0) ref.set(row.subarray(0, bpp));
        if (y === 0 || !row.equals(prev)) rowOther = differing(row, ref, bpp);
        [prev, row] = [row, prev];
      }
      other += rowOther;
      same += width - rowOther;
      // More than `allowed` pixels both match and differ from the first pixel's colour: no
      // colour holds all but `allowed` of the image.
      if (other > allowed && same > allowed) {
        return { blank: false, colour: hexOf([...ref]), other: other / pixels };
      }
    }
  }
  if (other <= allowed) return { blank: true, colour: hexOf([...ref]), other: other / pixels };
  // The first pixel was one of the few that differ: decode it all to find the main colour.
  return undefined;
}

/** How many pixels of a row differ from `ref` by more than SAME_COLOUR in a channel. */
function differing(row: Uint8Array, ref: Uint8Array, bpp: number): number {
  let n = 0;
  for (let i = 0; i < row.length; i += bpp) {
    for (let c = 0; c < bpp; c++) {
      const d = (row[i + c] as number) - (ref[c] as number);
      if (d > SAME_COLOUR || d < -SAME_COLOUR) {
        n++;
        break;
      }
    }
  }
  return n;
}

/** One row's PNG filter undone into `out` (PNG specification, 9.2); false: unknown filter. */
function unfilter(
  filter: number,
  line: Uint8Array,
  prev: Uint8Array,
  out: Uint8Array,
  bpp: number,
): boolean {
  if (filter > 4) return false;
  if (filter === 0) {
    out.set(line);
    return true;
  }
  if (filter === 2) {
    for (let i = 0; i < line.length; i++)
      out[i] = ((line[i] as number) + (prev[i] as number)) & 255;
    return true;
  }
  for (let i = 0; i < line.length; i++) {
    const left = i >= bpp ? (out[i - bpp] ?? 0) : 0;
    const up = prev[i] ?? 0;
    let predictor = 0;
    if (filter === 1) predictor = left;
    else if (filter === 2) predictor = up;
    else if (filter === 3) predictor = (left + up) >> 1;
    else if (filter === 4) {
      const upLeft = i >= bpp ? (prev[i - bpp] ?? 0) : 0;
      const p = left + up - upLeft;
      const pa = Math.abs(p - left);
      const pb = Math.abs(p - up);
      const pc = Math.abs(p - upLeft);
      predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
    }
    out[i] = ((line[i] ?? 0) + predictor) & 255;
  }
  return true;
}

const hexOf = (rgba: number[]): string =>
  hex(rgba[0] ?? 0, rgba[1] ?? 0, rgba[2] ?? 0, rgba[3] ?? 255);

/** The check over decoded RGBA pixels, the main colour found by sampling. */
function blanknessOf(data: Uint8Array, pixels: number): Blankness | null {
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
