import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const waitForSelector = defineOption({
  name: 'wait_for_selector',
  schema: Selector,
  resolve: (value) => ({ waitForSelector: value ?? null }),
  cacheKey: (o) => o.waitForSelector,
});
