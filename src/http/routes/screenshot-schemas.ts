import { type TSchema, Type } from 'typebox';
import { imageUrl } from '../../domain/captures/ports.ts';
import type { ScreenshotRecord } from '../../domain/store.ts';
import { toIso } from '../../lib/time.ts';
import { IsoDateTime } from '../schemas.ts';

/** The capture request's body is built from the option modules (one per field). */
export { CaptureRequest } from '../../domain/captures/capture-options.ts';

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const CaptureResult = Type.Object({
  id: Type.Optional(Type.Integer({ description: 'Present only for listable (Pro) records.' })),
  image_url: Type.String({ format: 'uri' }),
  cached: Type.Boolean(),
  expires_at: IsoDateTime,
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
});

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
