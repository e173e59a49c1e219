import { Type } from 'typebox';
import { defineOption, planRestriction } from './define.ts';

export const fresh = defineOption({
  name: 'fresh',
  schema: Type.Boolean({ description: 'Bypass the cache and render anew (Pro).' }),
  resolve(value, { plan }) {
    if (value === true && !plan.fresh) throw planRestriction('fresh', plan);
    return { fresh: value === true };
  },
  // Not the image: a fresh render is stored under the same key as any other.
  cacheKey: () => undefined,
});
