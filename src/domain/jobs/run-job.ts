import { retryInBackground } from '../../lib/retry.ts';
import { toIso } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';
import { captureAnswer } from '../captures/capture-answer.ts';
import type { CaptureInput } from '../captures/capture-options.ts';
import {
  type CaptureCaller,
  type CaptureOutcome,
  foregroundTurn,
  perRequest,
  runCapture,
} from '../captures/run-capture.ts';
import { AppError, isAppError } from '../errors.ts';
import type { CaptureJob, CompletedBatch, Lease, NewDelivery } from '../store.ts';
import { jobAnswer, jobResult, newDeliveryId } from './job-answer.ts';
import { openCredentials } from './job-credentials.ts';
import type { JobRunContext } from './ports.ts';

export interface RunJobOptions {
  /** This worker's name on the leases it takes. */
  owner: string;
  /** How long a lease lasts unless renewed (a third of it between renewals). */
  leaseMs: number;
  /**
   * Aborted when the node starts shutting down: a job its renderer then cuts off (503
   * overloaded) goes back to the queue at once, for another node, not after a retry delay.
   */
  stopping?: AbortSignal;
}

/**
 * Runs a job this worker has just claimed (its lease is `owner`'s): the same capture
 * pipeline as a synchronous request, with the quota unit the job already holds. The last
 * status is written only while the lease is still ours, in one transaction with the webhook
 * delivery, so a job succeeds at most once, with one result and one event: a worker that
 * lost its lease (its node stalled and another took the job over) writes nothing. A failure
 * that may pass by itself (a full render queue, another node's render of the same page that
 * outlived the wait: AppError `retryable`) puts the job back in the queue for a later
 * attempt, up to BOUNDS.jobs.maxAttempts attempts in all.
 */
export async function runJob(
  ctx: JobRunContext,
  job: CaptureJob,
  options: RunJobOptions,
): Promise<'done' | 'requeued'> {
  const lease: Lease = { id: job.id, owner: options.owner };
  const lost = new AbortController();
  const heartbeat = keepLease(ctx, lease, options.leaseMs, lost);
  try {
    const caller = await jobCaller(ctx, job, lease, lost.signal);
    if (caller === null) return 'done';
    let outcome: CaptureOutcome;
    try {
      outcome = await runCapture(ctx, {
        input: openCredentials(ctx.secrets, job.id, job.input) as CaptureInput,
        caller,
      });
    } catch (err) {
      if (lost.signal.aborted) return 'done'; // another worker has the job now
      return await retryOrFail(ctx, { job, lease, options }, err);
    }
    // A monitor's run is ended (compared, its events written) while this worker holds the
    // job: a node that stops in between leaves the job to be taken over, and the run ends once.
    if (lost.signal.aborted) return 'done'; // another worker has the job now
    if (job.monitorRunId !== null) await ctx.monitorRuns.succeeded(job, outcome.record);
    const result = jobResult(captureAnswer(ctx, outcome));
    const now = ctx.clock();
    const done: CaptureJob = { ...job, status: 'succeeded', result, finishedAt: now };
    // False when another worker took the job over: its answer is the job's one result. What
    // this one stored stays an ordinary cache entry of the account's (the other may even be
    // answering with it), never a second succeeded event.
    await ctx.store.jobs.finish(lease, {
      now,
      outcome: { status: 'succeeded', result },
      delivery: delivery(ctx, done, now),
      batchCompleted: batchCompleted(job),
    });
    return 'done';
  } finally {
    clearInterval(heartbeat);
  }
}

/** Renews the lease a third of its length apart; `lost` aborts once another worker has it. */
function keepLease(
  ctx: JobRunContext,
  lease: Lease,
  leaseMs: number,
  lost: AbortController,
): NodeJS.Timeout {
  const heartbeat = setInterval(
    () => {
      ctx.store.jobs.renew(lease, ctx.clock() + leaseMs).then(
        (held) => {
          if (!held) lost.abort(new AppError('internal_error', 'the job was taken over'));
        },
        () => {}, // a database blip: the next beat tries again, the lease has room
      );
    },
    Math.max(250, Math.floor(leaseMs / 3)),
  );
  heartbeat.unref();
  return heartbeat;
}

/**
 * Who the job captures for, as the pipeline's caller; null when it is over before any render
 * (its account is gone, it was interrupted too often, its monitor was deleted: failed then).
 */
async function jobCaller(
  ctx: JobRunContext,
  job: CaptureJob,
  lease: Lease,
  signal: AbortSignal,
): Promise<CaptureCaller | null> {
  const user = await ctx.store.users.findById(job.userId);
  if (user === null) return null; // the account is gone, and its jobs with it (cascade)
  if (job.attempts > BOUNDS.jobs.maxAttempts) {
    await fail(ctx, job, lease, {
      error: `the capture was interrupted ${BOUNDS.jobs.maxAttempts} times (its node stopped)`,
      code: 'internal_error',
    });
    return null;
  }
  if (job.monitorRunId !== null) {
    // A monitor's run is a render: its turn among the synchronous ones comes first (as in
    // run-capture.ts), so that a monitor deleted meanwhile is found before anything loads.
    await foregroundTurn(ctx, signal);
  }
  const monitorId = job.monitorRunId === null ? null : await ctx.monitorRuns.wanted(job);
  if (job.monitorRunId !== null && monitorId === null) {
    // Its monitor was deleted while it waited: no render, and the unit goes back.
    await fail(ctx, job, lease, { error: 'the monitor was deleted', code: 'not_found' });
    return null;
  }
  const plan = ctx.plans[user.plan];
  // A monitor's runs are cached apart from the account's captures: no capture is ever
  // answered with a run's image, nor a run with a capture's, so the monitor's deletion
  // deletes its images and nothing of the account's besides (docs/api.md, "Monitors").
  const cacheOwner = `user:${user.id}:${plan.name}${monitorId === null ? '' : `:${monitorId}`}`;
  return {
    client: `user:${user.id}`,
    cacheOwner,
    userId: user.id,
    plan,
    // The unit was taken when the job was queued; the job gives it back if it fails.
    reserve: async () => ({ quota: job.quota, release: async () => {} }),
    charge: perRequest,
    signal,
    background: true,
  };
}

/**
 * After a failed attempt: back to the queue at once when this node stops (a render it cut
 * off), later when the failure may pass by itself and attempts are left, else failed.
 */
async function retryOrFail(
  ctx: JobRunContext,
  attempt: { job: CaptureJob; lease: Lease; options: RunJobOptions },
  err: unknown,
): Promise<'done' | 'requeued'> {
  const { job, lease, options } = attempt;
  if (options.stopping?.aborted && isAppError(err) && err.code === 'overloaded') {
    if (await ctx.store.jobs.release(lease, { now: ctx.clock(), ran: true })) return 'requeued';
  }
  if (isAppError(err) && err.retryable && job.attempts < BOUNDS.jobs.maxAttempts) {
    const now = ctx.clock();
    const availableAt = now + Math.min(options.leaseMs, BOUNDS.jobs.retryDelayMs);
    if (await ctx.store.jobs.requeue(lease, { now, availableAt })) return 'requeued';
  }
  await fail(ctx, job, lease, describe(err));
  return 'done';
}

async function fail(
  ctx: JobRunContext,
  job: CaptureJob,
  lease: Lease,
  failure: { error: string; code: string },
): Promise<void> {
  const now = ctx.clock();
  const done: CaptureJob = {
    ...job,
    status: 'failed',
    error: failure.error,
    errorCode: failure.code,
    finishedAt: now,
  };
  const finished = await ctx.store.jobs.finish(lease, {
    now,
    outcome: { status: 'failed', ...failure },
    delivery: delivery(ctx, done, now),
    batchCompleted: batchCompleted(job),
  });
  // The unit goes back once: only the worker that wrote the failure returns it.
  if (finished) {
    const unit = { userId: job.userId, period: job.period, day: job.day };
    await retryInBackground(() => ctx.store.quota.release(unit));
    // After the unit is back, so a run seen failed has given it back; a tick meanwhile leaves
    // a run whose job ended just now alone (failStale).
    if (job.monitorRunId !== null) await ctx.monitorRuns.failed(job, failure.error);
  }
}

function describe(err: unknown): { error: string; code: string } {
  if (isAppError(err)) return { error: err.message, code: err.code };
  return { error: 'internal error', code: 'internal_error' };
}

/**
 * For a job of a batch: `batch.completed` (docs/api.md, "Batches"), written by the store in
 * the transaction that finished the batch's last job, so it follows every job's own event
 * and is written once however many nodes finish jobs of the batch at the same moment.
 */
function batchCompleted(
  job: CaptureJob,
): ((batch: CompletedBatch) => NewDelivery | null) | undefined {
  if (job.batchId === null) return undefined;
  return (batch) => {
    if (batch.webhookUrl === null) return null;
    const type = 'batch.completed';
    const data = { batch_id: batch.id, succeeded: batch.succeeded, failed: batch.failed };
    return {
      id: newDeliveryId(),
      userId: batch.userId,
      jobId: batch.id,
      url: batch.webhookUrl,
      eventType: type,
      payload: JSON.stringify({ type, timestamp: toIso(batch.completedAt), data }),
    };
  };
}

/** The webhook for the job's last status, if it has a webhook URL: written with it. */
function delivery(ctx: JobRunContext, job: CaptureJob, now: number): NewDelivery | null {
  if (job.webhookUrl === null) return null;
  const type = job.status === 'succeeded' ? 'screenshot.succeeded' : 'screenshot.failed';
  return {
    id: newDeliveryId(),
    userId: job.userId,
    jobId: job.id,
    url: job.webhookUrl,
    eventType: type,
    payload: JSON.stringify({ type, timestamp: toIso(now), data: jobAnswer(ctx, job) }),
  };
}
