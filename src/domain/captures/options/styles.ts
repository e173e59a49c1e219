import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const styles = defineOption({
  name: 'styles',
  schema: Type.String({
    minLength: 1,
    maxLength: BOUNDS.capture.maxInjectedLength,
    description:
      "CSS added to the page once it has loaded, before the capture (the page's own " +
      'Content-Security-Policy does not block it).',
  }),
  resolve: (value) => ({ styles: value ?? null }),
  cacheKey: (o) => o.styles ?? undefined,
});
