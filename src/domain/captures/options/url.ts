import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { defineOption } from './define.ts';

export const url = defineOption({
  name: 'url',
  // Exactly one of url, html or markdown (capture-target.ts checks that, and url's shape,
  // scheme, port and addresses, which are the target guard's: the pipeline runs them before
  // and after the option rules, so here it is only the parsed form).
  schema: Type.String({
    description:
      'Absolute http(s) URL of the page, at most ' +
      `${BOUNDS.capture.urlMaxLength.toLocaleString('en-US')} characters. Exactly one of ` +
      'url, html or markdown.',
  }),
  // The address the browser opens: the url, or where a document stands (base_url).
  resolve: (_value, { url }) => ({ url: url.href }),
  cacheKey: (o) => o.url,
});
