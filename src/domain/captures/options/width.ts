import { Type } from 'typebox';
import { defineOption } from './define.ts';

/** The viewport width when neither the request nor a device preset gives one. */
export const DEFAULT_WIDTH = 1920;

export const width = defineOption({
  name: 'width',
  schema: Type.Integer({
    minimum: 1,
    description: `Viewport width in CSS pixels (default ${DEFAULT_WIDTH}), capped at the plan maximum.`,
  }),
  // The plan's maximum also bounds element and full-page images (x the scale factor).
  resolve: (value, { plan }) => ({
    width: Math.min(value ?? DEFAULT_WIDTH, plan.max_width),
    maxWidth: plan.max_width,
  }),
  cacheKey: (o) => [o.width, o.maxWidth],
});
