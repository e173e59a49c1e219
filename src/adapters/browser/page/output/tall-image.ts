/**
 * Images taller than Chromium draws in one piece (docs/api.md, "Tall pages"): the frame is
 * drawn in slices of at most BOUNDS.browser.sliceHeight output px, each by its own Page.captureScreenshot
 * of a clip further down the page, and the slices are joined by libvips (sharp's `join`) into
 * one image of the asked format.
 *
 * Why slices: a compositor surface is at most its maximum texture size tall (16,384 px on
 * most GPUs, 8,192 on some), and past it Chromium repeats tiles (puppeteer issue 1576); one
 * piece also makes Chromium hold, and send in one CDP message, the whole image. Frames up to
 * BOUNDS.browser.onePieceMaxHeight stay one piece, encoded by Chromium, as before.
 *
 * Why join, and how memory stays bounded: the slices arrive as PNG (lossless, encoded by
 * Chromium with `optimizeForSpeed`, so only one lossy encode happens, at the end) and stay
 * encoded in Node. libvips' arrayjoin reads them top to bottom with sequential access and
 * the encoder pulls rows through it, so the raw image is never held whole: what is held is
 * the encoded slices, the encoded result and a strip of rows per thread. The resize to an
 * asked size (`image_width`, `image_height`) runs in the same pipeline, on the same rows.
 */
import type { Protocol } from 'puppeteer-core';
import sharp, { type Sharp } from 'sharp';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { ImageFormat } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { CaptureRun } from '../capture-run.ts';
import { imageSize } from './image-size.ts';

/** Page.captureScreenshot's bound for one slice (the capture's deadline ends it first). */
const SLICE_COMMAND_TIMEOUT_MS = 120_000;

/** A frame drawn in slices: its clip in CSS px and its size in output px. */
export interface TallFrame {
  clip: Protocol.Page.Viewport;
  /** Output px per CSS px: the clip's scale times the page's device scale factor. */
  pxPerCss: number;
  width: number;
  height: number;
}

/**
 * The output rows each slice draws, top to bottom: [top, bottom). The fewest slices, of
 * even heights: libvips' join makes every cell of its grid as tall as the tallest input, so
 * even slices leave at most a few rows to cut off the bottom.
 */
export function sliceRows(
  height: number,
  sliceMax: number = BOUNDS.browser.sliceHeight,
): Array<[number, number]> {
  const count = Math.ceil(height / sliceMax);
  const each = Math.ceil(height / count);
  const rows: Array<[number, number]> = [];
  for (let top = 0; top < height; top += each) rows.push([top, Math.min(height, top + each)]);
  return rows;
}

/** Whether a frame of this output height is drawn in slices. */
export const needsSlices = (height: number): boolean => height > BOUNDS.browser.onePieceMaxHeight;

/**
 * Draws the frame slice by slice, as PNG. Each slice is held to its expected size: a slice
 * Chromium drew otherwise (a repeated or missing tile shows as a wrong size first) is a 500,
 * not a quietly wrong image.
 */
export async function drawSlices(run: CaptureRun, frame: TallFrame): Promise<Buffer[]> {
  const { clip, pxPerCss } = frame;
  const slices: Buffer[] = [];
  try {
    for (const [top, bottom] of sliceRows(frame.height)) {
      // Between slices too: the deadline or an abort stops the drawing here.
      run.signal.throwIfAborted();
      const shot = await run.step(
        run.cdp.send(
          'Page.captureScreenshot',
          {
            format: 'png',
            // Zlib's fastest level: the slice is decoded once more, right here.
            optimizeForSpeed: true,
            fromSurface: true,
            captureBeyondViewport: true,
            clip: {
              x: clip.x,
              y: clip.y + top / pxPerCss,
              width: clip.width,
              height: (bottom - top) / pxPerCss,
              scale: clip.scale,
            },
          },
          { timeout: SLICE_COMMAND_TIMEOUT_MS },
        ),
      );
      const slice = Buffer.from(shot.data, 'base64');
      const size = imageSize(slice);
      // A fractional scale may round a slice's edge by a pixel; anything more is wrong.
      if (
        size?.format !== 'png' ||
        Math.abs(size.width - frame.width) > 1 ||
        Math.abs(size.height - (bottom - top)) > 1
      ) {
        throw new AppError(
          'internal_error',
          `chromium drew a ${size?.width}x${size?.height} slice where ` +
            `${frame.width}x${bottom - top} was asked`,
        );
      }
      slices.push(slice);
    }
    return slices;
  } catch (err) {
    // Nothing of a failed capture is kept a moment longer than needed.
    slices.length = 0;
    throw err;
  }
}

/**
 * Encoder settings of the joined image, as close as sharp has to the browser's. JPEG without
 * optimised Huffman tables (Chromium's encoder makes none either): optimising them is a
 * second pass over every coefficient of the image, which libjpeg then holds whole (measured:
 * 1.5x the raw image's size for a 1920 x 46,875 join, against 15 MiB without).
 */
function encode(image: Sharp, format: Exclude<ImageFormat, 'pdf'>, quality: number): Sharp {
  if (format === 'jpeg') return image.jpeg({ quality, optimiseCoding: false });
  if (format === 'webp') return image.webp({ quality });
  return image.png();
}

/**
 * The slices joined top to bottom, then brought to exactly `size` (the asked size of a
 * resized image, or a pixel of rounding at a fractional scale), encoded once as `format`.
 * No slice may hold more than the pixels an image may hold.
 */
export async function joinSlices(
  slices: Buffer[],
  format: Exclude<ImageFormat, 'pdf'>,
  quality: number,
  size: { width: number; height: number; maxPixels: number },
): Promise<Buffer> {
  try {
    let height = 0;
    let width = Number.POSITIVE_INFINITY;
    for (const slice of slices) {
      const s = imageSize(slice);
      if (s === null || s.width * s.height > size.maxPixels) {
        throw new Error(`a slice of ${s?.width}x${s?.height} px is past the pixel budget`);
      }
      height += s.height;
      width = Math.min(width, s.width);
    }
    // sharp gives each joined input its defaults, sequential access among them: rows are read
    // top to bottom once and no slice is decoded whole. (Its limitInputPixels would not reach
    // them either; the headers were read above.)
    // Raced with the deadline by the caller; this bound ends the work left behind.
    let joined = sharp(slices, { join: { across: 1 } }).timeout({
      seconds: BOUNDS.browser.joinTimeoutSeconds,
    });
    // The grid's cells are all the size of the largest slice: the padding below the last
    // one (and beside a slice a pixel narrower) is cut before anything else.
    joined = joined.extract({ left: 0, top: 0, width, height });
    if (width !== size.width || height !== size.height) {
      joined = joined.resize(size.width, size.height, { fit: 'fill' });
    }
    return await encode(joined, format, quality).toBuffer();
  } catch (err) {
    throw new AppError('internal_error', 'the slices of a tall image could not be joined', {
      cause: err,
    });
  }
}
