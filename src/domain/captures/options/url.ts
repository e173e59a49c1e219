import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const url = defineOption({
  name: 'url',
  required: true,
  // Its checks (shape, scheme, port, addresses) are the target guard's: the pipeline runs
  // them before and after the option rules, so here it is only the parsed form.
  schema: Type.String({
    description:
      'Absolute http(s) URL of the page, at most ' +
      `${BOUNDS.capture.urlMaxLength.toLocaleString('en-US')} characters.`,
  }),
  resolve: (_value, { url }) => ({ url: url.href }),
  cacheKey: (o) => o.url,
});
