import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const delay = defineOption({
  name: 'delay',
  schema: Type.Integer({
    minimum: 0,
    maximum: BOUNDS.capture.maxDelayMs,
    description: 'Extra wait before capture, ms.',
  }),
  resolve: (value) => ({ delay: value ?? 0 }),
  cacheKey: (o) => o.delay,
});
