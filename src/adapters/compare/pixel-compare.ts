/**
 * A monitor's change detection (docs/api.md, "Monitors"): pixelmatch over the raw RGBA of two
 * captures. pixelmatch because it ignores anti-aliasing (a font hinted one pixel differently
 * between two renders is not a change), compares in a perceptual colour space with a
 * tolerance, and writes the diff image itself; a plain byte comparison would call every
 * re-render of a page with text "changed". Images are decoded with sharp, which reads every
 * format a monitor may capture (PNG, JPEG, WebP).
 */
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
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

async function decode(image: Buffer): Promise<RawImage> {
  const { data, info } = await sharp(image)
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

export function createImageComparer(): ImageComparer {
  return {
    async compare(before, after, { threshold }): Promise<ImageComparison> {
      const [a, b] = await Promise.all([decode(before), decode(after)]);
      const { changedFraction, diff } = compareRaw(a, b);
      if (diff === null || changedFraction < threshold) return { changedFraction, diff: null };
      // Fast settings: the diff is mostly one faded grey, and is encoded on every changed run
      // (bench/monitors.ts holds a comparison to a tenth of a capture's CPU).
      const png = await sharp(diff, { raw: { width: b.width, height: b.height, channels: 4 } })
        .png({ compressionLevel: 2, adaptiveFiltering: false })
        .toBuffer();
      return { changedFraction, diff: png };
    },
  };
}
