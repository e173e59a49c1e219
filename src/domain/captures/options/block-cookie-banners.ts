import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const blockCookieBanners = defineOption({
  name: 'block_cookie_banners',
  schema: Type.Boolean({
    description:
      'Cookie consent banners dismissed before the capture, consent refused where the ' +
      "banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), " +
      'else hidden.',
  }),
  resolve: (value) => ({ blockCookieBanners: value ?? false }),
  cacheKey: (o) => (o.blockCookieBanners ? true : undefined),
});
