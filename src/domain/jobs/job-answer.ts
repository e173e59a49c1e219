import { randomBase62 } from '../../lib/crypto.ts';
import { toIso } from '../../lib/time.ts';
import type { CaptureAnswer } from '../captures/capture-answer.ts';
import type { CaptureJob } from '../store.ts';

/** `job_` + 24 base62 characters: an async capture's id, distinct from record ids. */
export const newJobId = (): string => `job_${randomBase62(24)}`;
export const isJobId = (id: string): boolean => /^job_[0-9A-Za-z]{24}$/.test(id);
/** A webhook delivery's id, the `webhook-id` of each of its attempts. */
export const newDeliveryId = (): string => `msg_${randomBase62(24)}`;

/** What a succeeded job keeps of its capture: the answer, the record's id renamed. */
export function jobResult(answer: CaptureAnswer): Record<string, unknown> {
  const { id, ...rest } = answer;
  return { ...rest, ...(id !== undefined ? { screenshot_id: id } : {}) };
}

export const statusUrl = (ctx: { publicUrl: string }, id: string): string =>
  `${ctx.publicUrl}/v1/screenshots/${id}`;

/**
 * GET /v1/screenshots/{job id}, and a webhook's `data`: `{id, status, ...}`, with the capture's
 * fields once succeeded and `error` and `code` once failed.
 */
export function jobAnswer(ctx: { publicUrl: string }, job: CaptureJob): Record<string, unknown> {
  return {
    id: job.id,
    status: job.status,
    status_url: statusUrl(ctx, job.id),
    created_at: toIso(job.createdAt),
    ...(job.finishedAt !== null ? { finished_at: toIso(job.finishedAt) } : {}),
    ...(job.status === 'succeeded' ? (job.result ?? {}) : {}),
    ...(job.status === 'failed' ? { error: job.error, code: job.errorCode } : {}),
  };
}
