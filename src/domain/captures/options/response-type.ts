import { Type } from 'typebox';
import { defineOption } from './define.ts';

export type ResponseType = 'json' | 'image';

/**
 * How the 201 answers: the JSON body (the default), or the image bytes themselves with the
 * JSON's facts in headers (docs/api.md, "Response 201"). The route reads it; the capture
 * and the cache do not (the same image either way).
 */
export const responseType = defineOption({
  name: 'response_type',
  schema: Type.Unsafe<ResponseType>(
    Type.String({
      enum: ['json', 'image'],
      description:
        'json (default): the JSON body. image: the image bytes as the 201 body, with ' +
        'Content-Type of the format and X-Image-Url, X-Expires-At, X-Cached, X-Quota-Used, ' +
        'X-Quota-Limit and (listable records) X-Screenshot-Id headers.',
    }),
  ),
  resolve: () => ({}),
  cacheKey: () => undefined,
});
