import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const click = defineOption({
  name: 'click',
  schema: {
    ...Selector,
    description: 'An element clicked once the page has loaded (after `scripts`).',
  },
  resolve: (value) => ({ click: value ?? null }),
  cacheKey: (o) => o.click ?? undefined,
});
