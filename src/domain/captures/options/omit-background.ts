import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';
import { DEFAULT_FORMAT } from './format.ts';

export const omitBackground = defineOption({
  name: 'omit_background',
  schema: Type.Boolean({ description: 'Transparent background (png/webp).' }),
  resolve(value, { resolved }) {
    const omitBackground = value ?? false;
    if (omitBackground && (resolved.format ?? DEFAULT_FORMAT) === 'jpeg') {
      throw new AppError(
        'invalid_request',
        'omit_background needs format png or webp (jpeg has no transparency)',
      );
    }
    return { omitBackground };
  },
  cacheKey: (o) => o.omitBackground,
});
