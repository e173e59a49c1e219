import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { IMAGE_FITS, type ImageFit } from '../renderer.ts';
import { defineOption } from './define.ts';

/** The smallest delivered image side (px). */
export const MIN_IMAGE_SIDE = 16;

const side = (axis: 'width' | 'height') =>
  Type.Integer({
    minimum: MIN_IMAGE_SIDE,
    description:
      `The delivered image's ${axis} in px (${MIN_IMAGE_SIDE} to the plan's max_${axis}). The ` +
      'page still renders at width x height (or full page); the image is scaled to this. ' +
      `With only image_${axis}, the other side follows the image's aspect ratio; with both, ` +
      'image_fit says how. Not with pdf.',
  });

/** A side beyond the plan's maximum is refused (a smaller image than asked is not delivered). */
function checkSide(
  name: 'image_width' | 'image_height',
  value: number | undefined,
  max: number,
  planName: string,
): number | null {
  if (value === undefined) return null;
  if (value > max) {
    throw new AppError(
      'invalid_request',
      `${name} may be at most ${max} on the ${planName} plan (got ${value})`,
    );
  }
  return value;
}

export const imageWidth = defineOption({
  name: 'image_width',
  schema: side('width'),
  resolve(value, { plan, resolved }) {
    const imageWidth = checkSide('image_width', value, plan.max_width, plan.name);
    if (imageWidth !== null && resolved.format === 'pdf') {
      throw new AppError('invalid_request', 'image_width is not allowed with format pdf');
    }
    return { imageWidth };
  },
  cacheKey: (o) => o.imageWidth ?? undefined,
});

export const imageHeight = defineOption({
  name: 'image_height',
  schema: side('height'),
  resolve(value, { plan, resolved }) {
    const imageHeight = checkSide('image_height', value, plan.max_height, plan.name);
    if (imageHeight !== null && resolved.format === 'pdf') {
      throw new AppError('invalid_request', 'image_height is not allowed with format pdf');
    }
    return { imageHeight };
  },
  cacheKey: (o) => o.imageHeight ?? undefined,
});

export const imageFit = defineOption({
  name: 'image_fit',
  schema: Type.Unsafe<ImageFit>(
    Type.String({
      enum: [...IMAGE_FITS],
      description:
        'With both image_width and image_height: cover (default) scales the image to cover ' +
        'both and crops it from the top centre; contain scales it to fit inside both (no ' +
        'padding: one side may come out smaller); fill stretches it to both.',
    }),
  ),
  // Only both sides make a choice; with one (or none) it is not part of the capture.
  resolve: (value, { resolved }) => ({
    imageFit:
      (resolved.imageWidth ?? null) !== null && (resolved.imageHeight ?? null) !== null
        ? (value ?? 'cover')
        : 'cover',
  }),
  cacheKey: (o) =>
    o.imageWidth !== null && o.imageHeight !== null && o.imageFit !== 'cover'
      ? o.imageFit
      : undefined,
});
