import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const quality = defineOption({
  name: 'quality',
  schema: Type.Integer({
    minimum: 1,
    maximum: 100,
    description: 'JPEG/WebP quality (default 80).',
  }),
  resolve: (value) => ({ quality: value ?? 80 }),
  cacheKey: (o) => o.quality,
});
