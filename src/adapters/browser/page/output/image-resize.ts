/**
 * The delivered image's size (`image_width`, `image_height`, `image_fit`; docs/api.md,
 * "Resized images"). Chromium draws the frame at the scale that gives the asked size, through
 * the screenshot's clip: a 400 px thumbnail of a 1280 px page is rendered and encoded at
 * 400 px, never drawn at full size and decoded again. `cover` is the same scale with the clip
 * cut to the asked box (from the top centre). Only `fill` (a stretch, which no uniform scale
 * gives) and an image Chromium rounded a pixel off the asked size are resized once more, by
 * libvips through sharp, from the largest image Chromium drew for them.
 */
import type { Protocol } from 'puppeteer-core';
import sharp, { type Sharp } from 'sharp';
import type { ImageFormat, RenderOptions } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import { fitImage, type ImageBounds } from './image-size.ts';

/** How a frame of `source` px becomes the delivered image. */
export interface ResizePlan {
  /** Output px per source px, as drawn by Chromium. */
  scale: number;
  /** The part of the source drawn (source px): the whole of it, or cut (cover, bounds). */
  crop: { x: number; y: number; width: number; height: number };
  /** The delivered image's size. */
  width: number;
  height: number;
  /** Chromium draws at `scale`, then the image is stretched to width x height (fill). */
  stretch: boolean;
  /** The bounds cut the drawn part (one side asked, the other beyond the bounds). */
  truncated: boolean;
}

/**
 * The plan for a source frame of `width` x `height` output px, or null when the options ask
 * for no size. Pure: what the browser then draws is the crop at the scale.
 */
export function planResize(
  source: { width: number; height: number },
  o: Pick<RenderOptions, 'imageWidth' | 'imageHeight' | 'imageFit'>,
  bounds: ImageBounds,
): ResizePlan | null {
  const { imageWidth: iw, imageHeight: ih } = o;
  if (iw === null && ih === null) return null;
  const W = source.width;
  const H = source.height;
  const whole = { x: 0, y: 0, width: W, height: H };
  if (iw !== null && ih !== null) {
    const sx = iw / W;
    const sy = ih / H;
    if (o.imageFit === 'fill') {
      const scale = Math.max(sx, sy);
      return { scale, crop: whole, width: iw, height: ih, stretch: true, truncated: false };
    }
    if (o.imageFit === 'contain') {
      const scale = Math.min(sx, sy);
      return sized(scale, whole, bounds);
    }
    // cover: the scale that covers both sides, the box cut from the top centre.
    const scale = Math.max(sx, sy);
    const width = Math.min(W, iw / scale);
    const height = Math.min(H, ih / scale);
    const crop = { x: (W - width) / 2, y: 0, width, height };
    return { scale, crop, width: iw, height: ih, stretch: false, truncated: false };
  }
  const scale = iw !== null ? iw / W : (ih as number) / H;
  return sized(scale, whole, bounds);
}

/** The whole source at `scale`, its far sides cut where the image would pass the bounds. */
function sized(scale: number, crop: ResizePlan['crop'], bounds: ImageBounds): ResizePlan {
  const want = {
    width: Math.max(1, Math.round(crop.width * scale)),
    height: Math.max(1, Math.round(crop.height * scale)),
  };
  const fit = fitImage(want.width, want.height, bounds);
  return {
    scale,
    crop: {
      ...crop,
      width: fit.width < want.width ? fit.width / scale : crop.width,
      height: fit.height < want.height ? fit.height / scale : crop.height,
    },
    width: fit.width,
    height: fit.height,
    stretch: false,
    truncated: fit.truncated,
  };
}

/**
 * The screenshot clip that draws the plan: `clip` (CSS px, `scale` its output px per CSS px
 * over the device scale factor) cut to the plan's crop and scaled by its scale.
 */
export function resizedClip(
  clip: Protocol.Page.Viewport,
  plan: ResizePlan,
  dsf: number,
): Protocol.Page.Viewport {
  // CSS px per source (output) px.
  const css = 1 / (clip.scale * dsf);
  return {
    x: clip.x + plan.crop.x * css,
    y: clip.y + plan.crop.y * css,
    width: plan.crop.width * css,
    height: plan.crop.height * css,
    scale: clip.scale * plan.scale,
  };
}

/** Encoder settings of the second pass, as close as sharp has to the browser's. */
function encode(image: Sharp, format: ImageFormat, quality: number): Sharp {
  if (format === 'jpeg') return image.jpeg({ quality });
  if (format === 'webp') return image.webp({ quality });
  return image.png();
}

/**
 * The image Chromium drew, resized to exactly width x height (a stretch for `fill`, a pixel
 * or two of rounding otherwise), in the same format. Decoding is bounded by the pixels the
 * drawn image may hold.
 */
export async function resizeExactly(
  image: Buffer,
  format: ImageFormat,
  quality: number,
  size: { width: number; height: number; maxPixels: number },
): Promise<Buffer> {
  try {
    const resized = sharp(image, { limitInputPixels: size.maxPixels }).resize(
      size.width,
      size.height,
      { fit: 'fill' },
    );
    return await encode(resized, format, quality).toBuffer();
  } catch (err) {
    throw new AppError('internal_error', 'the image could not be resized', { cause: err });
  }
}
