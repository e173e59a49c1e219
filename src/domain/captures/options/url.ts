import { Type } from 'typebox';
import { defineOption } from './define.ts';

export const url = defineOption({
  name: 'url',
  required: true,
  // Its checks (shape, scheme, port, addresses) are the target guard's: the pipeline runs
  // them before and after the option rules, so here it is only the parsed form.
  schema: Type.String({
    description: 'Absolute http(s) URL of the page, at most 2,048 characters.',
  }),
  resolve: (_value, { url }) => ({ url: url.href }),
  cacheKey: (o) => o.url,
});
