/**
 * What may be wrong with a capture that still succeeded (docs/api.md, "Warnings"): the 201
 * answer lists them (`warnings`, empty when nothing is suspect), and `fail_on` turns the
 * chosen ones into a 422 `capture_rejected` with no quota spent. The renderer finds them; a
 * record keeps them, so a cache hit answers the warnings of the render that made it.
 */
import { type Static, Type } from 'typebox';

export const WARNING_CODES = [
  'blank_image',
  'not_at_rest',
  'requests_pending',
  'fonts_not_loaded',
  'truncated',
  'banner_remaining',
] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

export const CaptureWarning = Type.Object(
  {
    code: Type.Unsafe<WarningCode>(
      Type.String({
        enum: [...WARNING_CODES],
        description:
          'blank_image: one colour, or nearly. not_at_rest: the page was still changing when ' +
          'the settle wait ended. requests_pending: requests still loading at capture. ' +
          'fonts_not_loaded: web fonts still loading or failed. truncated: the image was cut ' +
          'at the size limit. banner_remaining: with block_cookie_banners, a consent layer ' +
          'still covers part of the page.',
      }),
    ),
    message: Type.String({ description: 'What was seen, for a human.' }),
  },
  { description: 'Something that may be wrong with the image.' },
);
export type CaptureWarning = Static<typeof CaptureWarning>;

/** The 422 body's warnings and the message naming them. */
export function rejectionMessage(rejected: readonly CaptureWarning[]): string {
  return `the capture was rejected (fail_on): ${rejected
    .map((w) => `${w.code} (${w.message})`)
    .join('; ')}`;
}
