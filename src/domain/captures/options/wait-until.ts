import { Type } from 'typebox';
import type { WaitUntil } from '../renderer.ts';
import { defineOption } from './define.ts';

export const waitUntil = defineOption({
  name: 'wait_until',
  schema: Type.Unsafe<WaitUntil>(
    Type.String({ enum: ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] }),
  ),
  resolve: (value) => ({ waitUntil: value ?? 'load' }),
  cacheKey: (o) => o.waitUntil,
});
