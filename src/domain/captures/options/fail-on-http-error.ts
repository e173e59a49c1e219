import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const failOnHttpError = defineOption({
  name: 'fail_on_http_error',
  schema: Type.Boolean({
    description:
      'A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of ' +
      'being captured.',
  }),
  resolve: (value) => ({ failOnHttpError: value ?? false }),
  cacheKey: (o) => (o.failOnHttpError ? true : undefined),
});
