import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const blockAds = defineOption({
  name: 'block_ads',
  schema: Type.Boolean({
    description:
      'Ads blocked: requests matched by EasyList (shipped with the service; nothing is ' +
      'downloaded) are not made, and the ad boxes its element rules name are hidden.',
  }),
  resolve: (value) => ({ blockAds: value ?? false }),
  cacheKey: (o) => (o.blockAds ? true : undefined),
});
