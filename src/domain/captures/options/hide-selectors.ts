import { Type } from 'typebox';
import { CAPTURE_LIMITS } from '../ports.ts';
import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const hideSelectors = defineOption({
  name: 'hide_selectors',
  schema: Type.Array(Selector, { maxItems: CAPTURE_LIMITS.maxHideSelectors }),
  resolve: (value) => ({ hideSelectors: value ?? [] }),
  cacheKey: (o) => o.hideSelectors,
});
