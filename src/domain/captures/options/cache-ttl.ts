import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

const DEFAULT_SECONDS = BOUNDS.capture.cacheTtlMs / 1000;

export const cacheTtl = defineOption({
  name: 'cache_ttl',
  schema: Type.Integer({
    minimum: 0,
    maximum: BOUNDS.capture.maxCacheTtlSeconds,
    description: `Seconds a result may be served from the cache: 0 (never) to ${BOUNDS.capture.maxCacheTtlSeconds}; default ${DEFAULT_SECONDS}. \`fresh\` still forces a render.`,
  }),
  resolve: (value) => ({ cacheTtlMs: (value ?? DEFAULT_SECONDS) * 1000 }),
  // At the default it adds nothing: keys made before the option existed still hold.
  cacheKey: (o) =>
    o.cacheTtlMs === undefined || o.cacheTtlMs === BOUNDS.capture.cacheTtlMs
      ? undefined
      : o.cacheTtlMs / 1000,
});
