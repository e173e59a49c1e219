import { Type } from 'typebox';
import { defineOption } from './define.ts';

/** The viewport height when neither the request nor a device preset gives one. */
export const DEFAULT_HEIGHT = 1080;

export const height = defineOption({
  name: 'height',
  schema: Type.Integer({
    minimum: 1,
    description: `Viewport height in CSS pixels (default ${DEFAULT_HEIGHT}), capped at the plan maximum.`,
  }),
  resolve: (value, { plan }) => ({
    height: Math.min(value ?? DEFAULT_HEIGHT, plan.max_height),
  }),
  cacheKey: (o) => o.height,
});
