import { type Static, Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { CaptureRequest as CaptureRequestSchema } from '../../../domain/captures/capture-options.ts';
import { listScreenshots } from '../../../domain/captures/list-screenshots.ts';
import { type CaptureContext, imageUrl } from '../../../domain/captures/ports.ts';
import type { ScreenshotRecord, User } from '../../../domain/store.ts';
import { toIso } from '../../../lib/time.ts';
import { CursorPage, cursorPage, IsoDateTime } from '../../schemas.ts';

/** The capture's answer is the domain's too: an async job's result is the same answer. */
export { CaptureAnswer } from '../../../domain/captures/capture-answer.ts';
/** The capture request's body is built from the option modules (one per field). */
export { CaptureRequest } from '../../../domain/captures/capture-options.ts';

export const ScreenshotItem = Type.Object({
  id: Type.Integer(),
  url: Type.String(),
  format: Type.String(),
  width: Type.Integer(),
  height: Type.Integer(),
  full_page: Type.Boolean(),
  quality: Type.Integer(),
  device_scale_factor: Type.Number(),
  image_url: Type.String(),
  created_at: IsoDateTime,
  expires_at: IsoDateTime,
});

export const screenshotItem = (ctx: { publicUrl: string }, r: ScreenshotRecord) => ({
  id: r.id,
  url: r.url,
  format: r.format,
  width: r.width,
  height: r.height,
  full_page: r.fullPage,
  quality: r.quality,
  device_scale_factor: r.deviceScaleFactor,
  image_url: imageUrl(ctx, r),
  created_at: toIso(r.createdAt),
  expires_at: toIso(r.expiresAt),
});

/** The query of both listings (the API key's and the dashboard's): a page size and a cursor. */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: BOUNDS.listing.maxPageSize,
        default: BOUNDS.listing.defaultPageSize,
      }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: BOUNDS.listing.cursorMaxLength })),
  },
  { additionalProperties: false },
);

export const ScreenshotPage = CursorPage(ScreenshotItem);

/** One page of the account's records, newest first, as both listings answer it. */
export async function screenshotPage(
  ctx: CaptureContext,
  user: User,
  query: Static<typeof ListQuery>,
): Promise<Static<typeof ScreenshotPage>> {
  const page = await listScreenshots(ctx, {
    user,
    limit: query.limit ?? BOUNDS.listing.defaultPageSize,
    cursor: query.cursor,
  });
  return cursorPage(page, (r) => screenshotItem(ctx, r));
}

/** The body of POST /v1/screenshots/batch (docs/api.md, "Batches"). */
export const BatchRequest = Type.Object(
  {
    requests: Type.Array(CaptureRequestSchema, {
      minItems: 1,
      maxItems: BOUNDS.jobs.batchMaxRequests,
      description:
        'Capture bodies, as POST /v1/screenshots takes them; each is async (leave `async` ' +
        'out; `async: false`, a `webhook_url` of its own and `response_type: "image"` are ' +
        'refused, naming the request).',
    }),
    webhook_url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: BOUNDS.jobs.webhookUrlMaxLength,
        description:
          "Where every job's `screenshot.*` event and the batch's `batch.completed` are " +
          'POSTed (Standard Webhooks signature), under the same address rules as `url`.',
      }),
    ),
  },
  { additionalProperties: false },
);

const JobState = Type.Object(
  {
    id: Type.String(),
    status: Type.Union([
      Type.Literal('queued'),
      Type.Literal('rendering'),
      Type.Literal('succeeded'),
      Type.Literal('failed'),
    ]),
    status_url: Type.String({ format: 'uri' }),
  },
  {
    additionalProperties: true,
    description:
      'As GET /v1/screenshots/{id} answers it: with the capture fields once succeeded, ' +
      '`error` and `code` once failed.',
  },
);

/** GET /v1/screenshots/batch/{batch_id}. */
export const BatchAnswer = Type.Object({
  batch_id: Type.String(),
  status: Type.Union([Type.Literal('running'), Type.Literal('completed')]),
  status_url: Type.String({ format: 'uri' }),
  created_at: IsoDateTime,
  completed_at: Type.Optional(IsoDateTime),
  total: Type.Integer(),
  queued: Type.Integer(),
  rendering: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  jobs: Type.Array(JobState),
});
