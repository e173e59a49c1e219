import { Type } from 'typebox';
import { imageUrl } from '../../domain/captures/ports.ts';
import type { ScreenshotRecord } from '../../domain/store.ts';
import { toIso } from '../../lib/time.ts';
import { IsoDateTime } from '../schemas.ts';

const Selector = Type.String({ minLength: 1, maxLength: 500 });

export const CaptureRequest = Type.Object(
  {
    url: Type.String({
      description: 'Absolute http(s) URL of the page, at most 2,048 characters.',
    }),
    format: Type.Optional(
      Type.String({
        enum: ['png', 'jpeg', 'webp'],
        default: undefined,
        description: 'Default png; webp is Pro-only.',
      }),
    ),
    width: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Viewport width in CSS pixels (default 1920), capped at the plan maximum.',
      }),
    ),
    height: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Viewport height in CSS pixels (default 1080), capped at the plan maximum.',
      }),
    ),
    full_page: Type.Optional(
      Type.Boolean({
        description: 'Capture the full scrollable page (cut at 16,384 device pixels).',
      }),
    ),
    quality: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, description: 'JPEG/WebP quality (default 80).' }),
    ),
    fresh: Type.Optional(Type.Boolean({ description: 'Bypass the cache and render anew (Pro).' })),
    device_scale_factor: Type.Optional(
      Type.Number({
        minimum: 1,
        maximum: 3,
        description: 'Device pixel ratio, 1 to 3 (Pro above 1).',
      }),
    ),
    wait_until: Type.Optional(
      Type.String({ enum: ['load', 'domcontentloaded', 'networkidle0', 'networkidle2'] }),
    ),
    delay: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 10_000, description: 'Extra wait before capture, ms.' }),
    ),
    wait_for_selector: Type.Optional(Selector),
    selector: Type.Optional(
      Type.Intersect([Selector], { description: 'Capture only this element.' }),
    ),
    dark_mode: Type.Optional(Type.Boolean()),
    reduced_motion: Type.Optional(Type.Boolean()),
    hide_selectors: Type.Optional(Type.Array(Selector, { maxItems: 50 })),
    omit_background: Type.Optional(
      Type.Boolean({ description: 'Transparent background (png/webp).' }),
    ),
  },
  { additionalProperties: false },
);

export const CaptureResult = Type.Object({
  id: Type.Optional(Type.Integer({ description: 'Present only for listable (Pro) records.' })),
  image_url: Type.String({ format: 'uri' }),
  cached: Type.Boolean(),
  expires_at: IsoDateTime,
  quota: Type.Object({ used: Type.Integer(), limit: Type.Integer() }),
  format: Type.String(),
  width: Type.Integer({ description: 'Pixel width of the image.' }),
  height: Type.Integer({ description: 'Pixel height of the image.' }),
  truncated: Type.Optional(
    Type.Boolean({ description: 'Full-page image cut at the height limit.' }),
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
