import { Type } from 'typebox';
import { defineOption, planRestriction } from './define.ts';

export const fullPage = defineOption({
  name: 'full_page',
  schema: Type.Boolean({
    description:
      'Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500).',
  }),
  resolve(value, { plan }) {
    const fullPage = value ?? false;
    if (fullPage && !plan.full_page) throw planRestriction('full_page', plan);
    return { fullPage };
  },
  cacheKey: (o) => o.fullPage,
});
