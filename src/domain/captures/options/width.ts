import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const width = defineOption({
  name: 'width',
  schema: Type.Integer({
    minimum: 1,
    description: 'Viewport width in CSS pixels (default 1920), capped at the plan maximum.',
  }),
  // The plan's maximum also bounds element and full-page images (x the scale factor).
  resolve: (value, { plan }) => ({
    width: Math.min(value ?? 1920, plan.max_width),
    maxWidth: plan.max_width,
  }),
  cacheKey: (o) => [o.width, o.maxWidth],
});
