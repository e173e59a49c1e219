import { Type } from 'typebox';
import { WARNING_CODES, type WarningCode } from '../warnings.ts';
import { defineOption } from './define.ts';

/**
 * `fail_on`: warnings that end the capture as a 422 `capture_rejected` naming them, instead of
 * a 201 that carries them; nothing is stored and no quota spent (docs/api.md, "Warnings").
 * The renderer decides, so a rejected capture is never a cache entry; the list is part of the
 * key, so a cached image is only ever served to requests whose check it passed.
 */
export const failOn = defineOption({
  name: 'fail_on',
  schema: Type.Array(Type.Unsafe<WarningCode>(Type.String({ enum: [...WARNING_CODES] })), {
    uniqueItems: true,
    maxItems: WARNING_CODES.length,
    description:
      'Warnings that reject the capture (422 capture_rejected, no quota spent) instead of ' +
      `answering 201 with them: any of ${WARNING_CODES.join(', ')}. Default none.`,
  }),
  resolve: (value) => ({ failOn: value ?? [] }),
  cacheKey: (o) => (o.failOn && o.failOn.length > 0 ? [...o.failOn].sort() : undefined),
});
