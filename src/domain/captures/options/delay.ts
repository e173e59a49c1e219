import { Type } from 'typebox';
import { CAPTURE_LIMITS } from '../ports.ts';
import { defineOption } from './define.ts';

export const delay = defineOption({
  name: 'delay',
  schema: Type.Integer({
    minimum: 0,
    maximum: CAPTURE_LIMITS.maxDelayMs,
    description: 'Extra wait before capture, ms.',
  }),
  resolve: (value) => ({ delay: value ?? 0 }),
  cacheKey: (o) => o.delay,
});
