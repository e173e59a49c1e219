import { Type } from 'typebox';
import { BOUNDS } from '../../bounds.ts';
import { AppError } from '../../errors.ts';
import { defineOption } from './define.ts';

export const blockRequests = defineOption({
  name: 'block_requests',
  schema: Type.Array(
    Type.String({ minLength: 1, maxLength: BOUNDS.capture.maxBlockPatternLength }),
    {
      maxItems: BOUNDS.capture.maxBlockPatterns,
      description:
        'URL patterns whose requests the page does not make. `*` stands for any characters; ' +
        'a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, ' +
        '`*/analytics.js*`. The page itself (the `url`) is always loaded.',
    },
  ),
  resolve(value) {
    const patterns = value ?? [];
    patterns.forEach((pattern, i) => {
      if (!/^[\x21-\x7e]+$/.test(pattern)) {
        throw new AppError(
          'invalid_request',
          `block_requests[${i}] may hold printable ASCII characters only, no spaces`,
        );
      }
    });
    return { blockRequests: [...new Set(patterns)] };
  },
  cacheKey: (o) => (o.blockRequests.length > 0 ? [...o.blockRequests].sort() : undefined),
});
