import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const scripts = defineOption({
  name: 'scripts',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.capture.maxInjectedLength,
    description:
      'JavaScript run in the page once it has loaded (after `styles`), before the capture; a ' +
      'promise it ends with is awaited within the render deadline. An error it throws is 400.',
  }),
  resolve: (value) => ({ scripts: value ?? null }),
  cacheKey: (o) => o.scripts ?? undefined,
});
