import { randomBase62 } from '../../lib/crypto.ts';
import { toIso } from '../../lib/time.ts';
import type { AnyCaptureAnswer } from '../captures/capture-answer.ts';
import type { CaptureBatch, CaptureJob } from '../store.ts';

/** `job_` + 24 base62 characters: an async capture's id, distinct from record ids. */
export const newJobId = (): string => `job_${randomBase62(24)}`;
export const isJobId = (id: string): boolean => /^job_[0-9A-Za-z]{24}$/.test(id);
/** `bat_` + 24 base62 characters: a batch's id (docs/api.md, "Batches"). */
export const newBatchId = (): string => `bat_${randomBase62(24)}`;
export const isBatchId = (id: string): boolean => /^bat_[0-9A-Za-z]{24}$/.test(id);
/** A webhook delivery's id, the `webhook-id` of each of its attempts. */
export const newDeliveryId = (): string => `msg_${randomBase62(24)}`;

/** What a succeeded job keeps of its capture: the answer, the record's id renamed. */
export function jobResult(answer: AnyCaptureAnswer): Record<string, unknown> {
  const { id, ...rest } = answer;
  return { ...rest, ...(id !== undefined ? { screenshot_id: id } : {}) };
}

export const statusUrl = (ctx: { publicUrl: string }, id: string): string =>
  `${ctx.publicUrl}/v1/screenshots/${id}`;

export const batchStatusUrl = (ctx: { publicUrl: string }, id: string): string =>
  `${ctx.publicUrl}/v1/screenshots/batch/${id}`;

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
    // A batch's job says so, in its status and its own webhook event alike.
    ...(job.batchId !== null ? { batch_id: job.batchId } : {}),
    ...(job.finishedAt !== null ? { finished_at: toIso(job.finishedAt) } : {}),
    ...(job.status === 'succeeded' ? (job.result ?? {}) : {}),
    ...(job.status === 'failed' ? { error: job.error, code: job.errorCode } : {}),
  };
}

/**
 * GET /v1/screenshots/batch/{batch id}: the batch's counts and each job as GET
 * /v1/screenshots/{job id} answers it, in the order of the batch's `requests`.
 */
export function batchAnswer(
  ctx: { publicUrl: string },
  batch: CaptureBatch,
  jobs: readonly CaptureJob[],
): Record<string, unknown> {
  const open = (status: string) => jobs.filter((j) => j.status === status).length;
  return {
    batch_id: batch.id,
    status: batch.completedAt === null ? 'running' : 'completed',
    status_url: batchStatusUrl(ctx, batch.id),
    created_at: toIso(batch.createdAt),
    ...(batch.completedAt !== null ? { completed_at: toIso(batch.completedAt) } : {}),
    total: batch.total,
    queued: open('queued'),
    rendering: open('rendering'),
    succeeded: batch.succeeded,
    failed: batch.failed,
    jobs: jobs.map((job) => jobAnswer(ctx, job)),
  };
}
