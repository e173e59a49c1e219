import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';
import { Selector } from './selector-schema.ts';

export const scrollIntoView = defineOption({
  name: 'scroll_into_view',
  schema: {
    ...Selector,
    description: 'An element scrolled to the top of the viewport before a viewport capture.',
  },
  resolve(value, { resolved }) {
    if (value !== undefined && (resolved.fullPage || (resolved.selector ?? null) !== null)) {
      throw new AppError(
        'invalid_request',
        'scroll_into_view is for viewport captures: not with full_page or selector',
      );
    }
    return { scrollIntoView: value ?? null };
  },
  cacheKey: (o) => o.scrollIntoView ?? undefined,
});
