import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const reducedMotion = defineOption({
  name: 'reduced_motion',
  schema: Type.Boolean(),
  resolve: (value) => ({ reducedMotion: value ?? false }),
  cacheKey: (o) => o.reducedMotion,
});
