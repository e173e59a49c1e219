import { Type } from 'typebox';
import { RESOURCE_KINDS, type ResourceKind } from '../renderer.ts';
import { defineOption } from './define.ts';

export const blockResources = defineOption({
  name: 'block_resources',
  schema: Type.Array(Type.Unsafe<ResourceKind>(Type.String({ enum: [...RESOURCE_KINDS] })), {
    maxItems: RESOURCE_KINDS.length,
    description:
      'Kinds of request the page does not make. `other` is every kind not named here ' +
      '(beacons, manifests, prefetches, event streams, text tracks), never the page itself.',
  }),
  resolve: (value) => ({
    blockResources: RESOURCE_KINDS.filter((kind) => value?.includes(kind)),
  }),
  cacheKey: (o) => (o.blockResources.length > 0 ? o.blockResources : undefined),
});
