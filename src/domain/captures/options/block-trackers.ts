import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const blockTrackers = defineOption({
  name: 'block_trackers',
  schema: Type.Boolean({
    description:
      'Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing ' +
      'is downloaded) are not made.',
  }),
  resolve: (value) => ({ blockTrackers: value ?? false }),
  cacheKey: (o) => (o.blockTrackers ? true : undefined),
});
