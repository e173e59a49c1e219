import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const hasTouch = defineOption({
  name: 'has_touch',
  schema: Type.Boolean({
    description:
      'Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). ' +
      "Default: the device preset's, else false.",
  }),
  resolve: (value, { resolved }) => ({ hasTouch: value ?? resolved.hasTouch ?? false }),
  cacheKey: (o) => (o.hasTouch ? true : undefined),
});
