import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import type { RequestHeader } from '../renderer.ts';
import { defineOption } from './define.ts';
import { HEADER_TEXT, TOKEN } from './header-text.ts';

/**
 * Headers a request may not set: the ones that frame the request or its connection, the
 * cookie jar's (`cookies` is the field for that) and the proxy's.
 */
const REFUSED = new Set([
  'host',
  'cookie',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
]);

export const headers = defineOption({
  name: 'headers',
  schema: Type.Record(
    Type.String(),
    Type.String({ maxLength: BOUNDS.capture.maxHeaderValueLength }),
    {
      maxProperties: BOUNDS.capture.maxHeaders,
      description:
        'Extra request headers, `{"Name": "value"}`, sent with the requests to the ' +
        "target's own origin only (the page itself and its same-origin resources; never to " +
        'other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are ' +
        'refused.',
    },
  ),
  resolve(value) {
    const list: RequestHeader[] = [];
    const seen = new Set<string>();
    for (const [name, headerValue] of Object.entries(value ?? {})) {
      const shown = name.slice(0, 100);
      const lower = name.toLowerCase();
      if (name.length > BOUNDS.capture.maxHeaderNameLength || !TOKEN.test(name)) {
        throw new AppError('invalid_request', `headers: "${shown}" is not a valid header name`);
      }
      if (REFUSED.has(lower) || lower.startsWith('proxy-')) {
        throw new AppError('invalid_request', `headers: ${shown} may not be set`);
      }
      if (seen.has(lower)) {
        throw new AppError('invalid_request', `headers: ${shown} is given twice`);
      }
      if (headerValue !== '' && !HEADER_TEXT.test(headerValue)) {
        throw new AppError(
          'invalid_request',
          `headers.${shown} may hold printable ASCII characters only (no line breaks)`,
        );
      }
      seen.add(lower);
      list.push({ name, value: headerValue });
    }
    return { headers: list };
  },
  // Header values are often credentials (a bearer token, an API key).
  cacheKey: (o, digest) =>
    o.headers.length > 0
      ? digest(
          o.headers
            .map((h): [string, string] => [h.name.toLowerCase(), h.value])
            .sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : undefined,
});
