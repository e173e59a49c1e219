import { toIso } from '../../lib/time.ts';
import { imageUrl } from './ports.ts';
import type { PageMetadata } from './renderer.ts';
import type { CaptureOutcome } from './run-capture.ts';

export interface CaptureAnswer {
  /** Listable (Pro) records only. */
  id?: number;
  image_url: string;
  cached: boolean;
  expires_at: string;
  quota: { used: number; limit: number };
  format: string;
  width: number;
  height: number;
  truncated?: boolean;
  metadata?: PageMetadata;
}

/**
 * The capture's answer fields (docs/api.md, "Response 201"): the 201's JSON body, and an
 * async job's result once it succeeded.
 */
export function captureAnswer(
  ctx: { publicUrl: string },
  outcome: Pick<CaptureOutcome, 'record' | 'cached' | 'quota'>,
): CaptureAnswer {
  const { record } = outcome;
  return {
    ...(record.listable ? { id: record.id } : {}),
    image_url: imageUrl(ctx, record),
    cached: outcome.cached,
    expires_at: toIso(record.expiresAt),
    quota: outcome.quota,
    format: record.format,
    width: record.width,
    height: record.height,
    // Said on every full-page capture, and on any other image that was cut (an element
    // taller or wider than the limits).
    ...(record.fullPage || record.truncated ? { truncated: record.truncated } : {}),
    ...(record.metadata !== null ? { metadata: record.metadata } : {}),
  };
}
