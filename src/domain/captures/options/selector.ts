import { Type } from 'typebox';
import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const selector = defineOption({
  name: 'selector',
  schema: Type.Intersect([Selector], { description: 'Capture only this element.' }),
  resolve: (value) => ({ selector: value ?? null }),
  cacheKey: (o) => o.selector,
});
