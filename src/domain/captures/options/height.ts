import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const height = defineOption({
  name: 'height',
  schema: Type.Integer({
    minimum: 1,
    description: 'Viewport height in CSS pixels (default 1080), capped at the plan maximum.',
  }),
  resolve: (value, { plan }) => ({ height: Math.min(value ?? 1080, plan.max_height) }),
  cacheKey: (o) => o.height,
});
