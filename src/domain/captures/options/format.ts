import { Type } from 'typebox';
import { IMAGE_FORMATS, type ImageFormat } from '../formats.ts';
import { defineOption, planRestriction } from './define.ts';

export const DEFAULT_FORMAT: ImageFormat = 'png';

export const format = defineOption({
  name: 'format',
  // A string with an enum (not Type.Enum): a number is "must be a string", as before.
  schema: Type.Unsafe<ImageFormat>(
    Type.String({
      enum: [...IMAGE_FORMATS],
      default: undefined,
      description:
        'Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with ' +
        'the pdf_* options.',
    }),
  ),
  resolve(value, { plan }) {
    const format = value ?? DEFAULT_FORMAT;
    if (!plan.formats.includes(format)) throw planRestriction(`format ${format}`, plan);
    return { format };
  },
  cacheKey: (o) => o.format,
});
