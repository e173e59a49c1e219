import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const quality = defineOption({
  name: 'quality',
  schema: Type.Integer({
    minimum: BOUNDS.capture.minQuality,
    maximum: BOUNDS.capture.maxQuality,
    description: 'JPEG/WebP quality (default 80).',
  }),
  resolve: (value) => ({ quality: value ?? 80 }),
  cacheKey: (o) => o.quality,
});
