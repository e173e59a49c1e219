import { type Static, type TSchema, Type } from 'typebox';
import { toIso } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';
import { contentUrl, imageUrl } from './ports.ts';
import type { CaptureOutcome } from './run-capture.ts';
import { CaptureWarning } from './warnings.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * The capture's answer (docs/api.md, "Response 201"), written once: POST /v1/screenshots
 * answers it as its 201 schema (and so the API document), the type below is derived from it,
 * and the tests import that type. The domain owns it as it owns the request
 * (`CaptureRequest`, capture-options.ts), since an async job's result is the same answer.
 */
export const CaptureAnswer = Type.Object({
  id: Type.Optional(Type.Integer({ description: 'Present only for listable (Pro) records.' })),
  image_url: Type.Optional(
    Type.String({
      format: 'uri',
      description: 'Absent only with `storage.hosted: false` (no copy kept here).',
    }),
  ),
  cached: Type.Boolean(),
  expires_at: Type.String({ format: 'date-time' }),
  quota: Type.Object({ used: Type.Integer(), limit: Type.Integer() }),
  format: Type.String(),
  width: Type.Integer({
    description: 'Pixel width of the image; for a PDF, its first page in points (1/72 in).',
  }),
  height: Type.Integer({
    description: 'Pixel height of the image; for a PDF, its first page in points (1/72 in).',
  }),
  truncated: Type.Optional(
    Type.Boolean({ description: 'Full-page image cut at the height limit.' }),
  ),
  warnings: Type.Array(CaptureWarning, {
    description:
      'What may be wrong with the image, empty when nothing is suspect (docs/api.md, ' +
      '"Warnings"); `fail_on` turns chosen codes into a 422 instead.',
  }),
  metadata: Type.Optional(
    Type.Object(
      {
        title: Nullable(Type.String()),
        description: Nullable(Type.String()),
        final_url: Type.String({ description: 'The page URL when captured, after redirects.' }),
        http_status: Nullable(Type.Integer()),
        og: Type.Object({
          title: Nullable(Type.String()),
          description: Nullable(Type.String()),
          image: Nullable(Type.String()),
        }),
        icon_url: Nullable(Type.String()),
      },
      { description: 'Only with `metadata: true`; absent values are null.' },
    ),
  ),
  content: Type.Optional(
    Type.Object(
      {
        html: Type.Optional(Type.String({ format: 'uri', description: 'The DOM as HTML.' })),
        text: Type.Optional(Type.String({ format: 'uri', description: 'The visible text.' })),
        markdown: Type.Optional(
          Type.String({ format: 'uri', description: 'The DOM as Markdown.' }),
        ),
      },
      {
        description:
          "Only with `content`: where each kind asked for is hosted, with the image's " +
          'retention.',
      },
    ),
  ),
  storage: Type.Optional(
    Type.Object(
      {
        destination: Type.String(),
        bucket: Type.String(),
        key: Type.String({ description: "The image's key in the bucket, prefix included." }),
        location: Type.String({ description: 'Its URL (public only with acl public-read).' }),
        etag: Nullable(Type.String()),
      },
      { description: 'Only with `storage`: where the copy was written (docs/destinations.md).' },
    ),
  ),
  content_truncated: Type.Optional(
    Type.Boolean({
      description: `Only with \`content\`: a file was cut at ${BOUNDS.capture.maxContentBytes / 2 ** 20} MiB.`,
    }),
  ),
});

/**
 * The answer of a capture kept here, as nearly every one is (`image_url` present); what the
 * route may answer is `AnyCaptureAnswer`: `storage.hosted: false` leaves `image_url` out.
 */
export type CaptureAnswer = Static<typeof CaptureAnswer> & { image_url: string };
export type AnyCaptureAnswer = Static<typeof CaptureAnswer>;

/** A capture's answer: the 201's JSON body, and an async job's result once it succeeded. */
export function captureAnswer(
  ctx: { publicUrl: string },
  outcome: Pick<CaptureOutcome, 'record' | 'cached' | 'quota' | 'storage'>,
): AnyCaptureAnswer {
  const { record } = outcome;
  const copy = outcome.storage ?? null;
  return {
    // Without a copy here the record is gone: no id to read it by, no image_url.
    ...(record.listable && copy?.hosted !== false ? { id: record.id } : {}),
    ...(copy?.hosted === false ? {} : { image_url: imageUrl(ctx, record) }),
    ...(copy ? { storage: copy.delivered } : {}),
    cached: outcome.cached,
    expires_at: toIso(record.expiresAt),
    quota: outcome.quota,
    format: record.format,
    width: record.width,
    height: record.height,
    // Said on every full-page capture, and on any other image that was cut (an element
    // taller or wider than the limits).
    ...(record.fullPage || record.truncated ? { truncated: record.truncated } : {}),
    warnings: record.warnings,
    ...(record.metadata !== null ? { metadata: record.metadata } : {}),
    ...(record.content !== null
      ? {
          content: Object.fromEntries(
            record.content.kinds.map((k) => [k, contentUrl(ctx, record, k)]),
          ),
          content_truncated: record.content.truncated,
        }
      : {}),
  };
}
