import { Type } from 'typebox';
import { findDevice } from '../devices.ts';
import { defineOption } from './define.ts';
import { DEFAULT_HEIGHT } from './height.ts';
import { DEFAULT_WIDTH } from './width.ts';

/**
 * The swap takes the sizes as asked for (the request's, else the preset's, else the
 * defaults), not the capped ones the width, height and device rules resolved: capping first
 * would lose the long side (an iPad Pro's 1366 x 1024 turned on Free would come out 1080 x
 * 1024). The plan's caps then apply to the turned size.
 */
export const landscape = defineOption({
  name: 'landscape',
  schema: Type.Boolean({
    description:
      "Width and height swapped (the device preset's, or the request's), then capped at the " +
      "plan's maximum like width and height.",
  }),
  resolve(value, { input, plan }) {
    if (value !== true) return {};
    const preset = typeof input.device === 'string' ? findDevice(input.device) : undefined;
    const asked = (field: 'width' | 'height', fallback: number): number => {
      const given = input[field];
      if (typeof given === 'number') return given;
      return preset ? preset[field] : fallback;
    };
    const width = asked('width', DEFAULT_WIDTH);
    const height = asked('height', DEFAULT_HEIGHT);
    return {
      width: Math.min(height, plan.max_width),
      height: Math.min(width, plan.max_height),
    };
  },
  // Folded into width and height, which are keyed.
  cacheKey: () => undefined,
});
