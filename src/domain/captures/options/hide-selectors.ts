import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const hideSelectors = defineOption({
  name: 'hide_selectors',
  schema: Type.Array(Selector, { maxItems: BOUNDS.capture.maxHideSelectors }),
  resolve: (value) => ({ hideSelectors: value ?? [] }),
  cacheKey: (o) => o.hideSelectors,
});
