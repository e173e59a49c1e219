/**
 * How Page.captureScreenshot encodes the image: the one place the renderer takes its encoder
 * settings from (the capture benchmark's baseline takes the same, so the two encode alike).
 * docs/api.md, "Image encoding".
 */
import type { ImageFormat } from '../../../../domain/captures/renderer.ts';

export interface EncoderSettings {
  format: Exclude<ImageFormat, 'pdf'>;
  /** JPEG and WebP only: 1 to 100. */
  quality?: number;
  /** Always: the image comes from the compositor's surface, not a separate paint. */
  fromSurface: true;
}

/** The encoder parameters of Page.captureScreenshot for `format` at `quality`. */
export function encoderSettings(
  format: Exclude<ImageFormat, 'pdf'>,
  quality: number,
): EncoderSettings {
  if (format === 'png') return { format, fromSurface: true };
  return { format, quality: Math.min(100, Math.max(1, Math.round(quality))), fromSurface: true };
}
