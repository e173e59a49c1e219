import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const landscape = defineOption({
  name: 'landscape',
  schema: Type.Boolean({
    description:
      "Width and height swapped (the device preset's, or the request's), then capped at the " +
      "plan's maximum like width and height.",
  }),
  resolve(value, { resolved, plan }) {
    if (value !== true || resolved.width === undefined || resolved.height === undefined) {
      return {};
    }
    return {
      width: Math.min(resolved.height, plan.max_width),
      height: Math.min(resolved.width, plan.max_height),
    };
  },
  // Folded into width and height, which are keyed.
  cacheKey: () => undefined,
});
