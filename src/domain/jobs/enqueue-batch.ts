import { monthBounds, toIso } from '../../lib/time.ts';
import type { CaptureInput } from '../captures/capture-options.ts';
import { CAPTURE_OPTIONS } from '../captures/capture-options.ts';
import { reserveMonthly } from '../captures/capture-screenshot.ts';
import { destinationFor } from '../destinations/deliver.ts';
import { AppError, isAppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { CaptureJob, NewJob, User } from '../store.ts';
import { checkCapture, checkWebhookUrl, holdLost, jobRow, tooManyJobs } from './enqueue-capture.ts';
import { newBatchId, newJobId } from './job-answer.ts';
import type { JobContext } from './ports.ts';

export interface BatchInput {
  requests: CaptureInput[];
  webhook_url?: string;
}

/**
 * POST /v1/screenshots/batch (docs/api.md, "Batches"), after authentication and the
 * per-minute rate: every request checked as an async capture's (the first that fails refuses
 * the whole batch with 400, its message naming `requests[i]`, before anything is held), the
 * batch's webhook URL under a target's address rules, one quota unit per request (402 when
 * the month cannot cover them all: none is kept), the account's bound of open jobs for all of
 * them at once (429), then the batch and its jobs are written in one transaction and
 * dispatched. Each job then runs, holds and gives back its unit exactly as a single async
 * capture does (run-job.ts), and the last one's end writes `batch.completed`.
 */
export async function enqueueBatch(
  ctx: JobContext,
  options: { user: User; keyId: number; input: BatchInput },
): Promise<{ id: string; jobs: CaptureJob[] }> {
  const { user, keyId, input } = options;
  const plan = ctx.plans[user.plan];
  if (plan.max_queued_jobs === 0) {
    throw new AppError('plan_restriction', `batches are not available on the ${plan.name} plan`);
  }
  const count = input.requests.length;
  if (count > plan.max_queued_jobs) {
    throw new AppError(
      'plan_restriction',
      `requests: the ${plan.name} plan queues at most ${plan.max_queued_jobs} async captures at once (max_queued_jobs); this batch has ${count}`,
    );
  }
  const captures = input.requests.map((request, index) => checkRequest(ctx, plan, request, index));
  // Each destination named, the account's own (a 400 naming the request otherwise).
  for (const [index, capture] of captures.entries()) {
    const copy = (capture as { storage?: { destination: string } }).storage;
    if (copy === undefined) continue;
    await destinationFor(ctx, user.id, {
      destination: copy.destination,
      path: '',
      hosted: true,
    }).catch((err: unknown) => {
      throw isAppError(err) ? new AppError(err.code, `requests[${index}].${err.message}`) : err;
    });
  }
  const webhookUrl =
    input.webhook_url === undefined
      ? null
      : await checkWebhookUrl(ctx.guard, input.webhook_url, user);
  await enoughQuota(ctx, user, plan, count);

  // One held unit per request, as a single async capture takes its own; all kept in the
  // transaction that writes the jobs, or all given back.
  const allowances: Array<Awaited<ReturnType<typeof reserveMonthly>>> = [];
  const batchId = newBatchId();
  try {
    for (let i = 0; i < count; i++) {
      try {
        allowances.push(await reserveMonthly(ctx, user, { hold: true }));
      } catch (err) {
        // Another capture took the last units between the check above and here.
        if (isAppError(err) && err.code === 'quota_exceeded') {
          throw quotaShort(err, count, i);
        }
        throw err;
      }
    }
    const now = ctx.clock();
    const jobs: NewJob[] = captures.map((capture, i) =>
      jobRow(ctx, {
        id: newJobId(),
        userId: user.id,
        keyId,
        capture,
        webhookUrl,
        allowance: allowances[i] as (typeof allowances)[number],
        createdAt: now,
      }),
    );
    const created = await ctx.store.transaction(async (tx) => {
      const written = await tx.batches.create(
        { id: batchId, userId: user.id, webhookUrl, createdAt: now },
        jobs,
        plan.max_queued_jobs,
      );
      if (written === 'limit_reached') return written;
      for (const allowance of allowances) {
        if (!(await tx.quota.keep(allowance.hold as number))) throw holdLost();
      }
      return written;
    });
    if (created === 'limit_reached') {
      throw tooManyJobs(
        plan.max_queued_jobs,
        plan.name,
        now,
        `the batch's ${count} jobs and the account's queued or rendering ones would pass ${plan.max_queued_jobs} (the ${plan.name} plan's max_queued_jobs); retry when some have finished.`,
      );
    }
    for (const allowance of allowances) ctx.quotaHolds.forget(allowance.hold as number);
    // Durable from here: a dispatch that fails (Redis away) is retried by the sweep.
    await Promise.all(created.map((job) => ctx.jobs.dispatch(job.id).catch(() => {})));
    return { id: batchId, jobs: created };
  } catch (err) {
    await Promise.all(allowances.map((a) => a.release()));
    throw err;
  }
}

/**
 * One request, checked as an async capture is (enqueue-capture.ts): the plan's rules and
 * the URL screen without DNS. What the batch decides for all its requests is refused on a
 * request rather than silently overridden: `async: false`, a `webhook_url` of its own, and
 * `response_type: "image"`. The capture body to store: without `async`.
 */
function checkRequest(
  ctx: JobContext,
  plan: Readonly<Plan>,
  request: CaptureInput,
  index: number,
): Omit<CaptureInput, 'async' | 'webhook_url'> {
  const at = `requests[${index}]`;
  const { async: isAsync, webhook_url: hook, ...capture } = request;
  if (isAsync === false) {
    throw new AppError(
      'invalid_request',
      `${at}.async: every request of a batch is async; leave async out`,
    );
  }
  if (hook !== undefined) {
    throw new AppError(
      'invalid_request',
      `${at}.webhook_url: set webhook_url on the batch, not on its requests (it applies to all of them)`,
    );
  }
  if (capture.response_type === 'image') {
    throw new AppError(
      'invalid_request',
      `${at}.response_type: image is not allowed in a batch (each result is at its job's status_url)`,
    );
  }
  try {
    checkCapture(ctx, plan, { ...capture, async: true });
  } catch (err) {
    if (!isAppError(err)) throw err;
    throw new AppError(err.code, nameRequest(at, err.message), {
      ...(err.body ? { body: err.body } : {}),
    });
  }
  return capture;
}

const OPTION_NAMES = new Set<string>(CAPTURE_OPTIONS.map((o) => o.name));

/**
 * `requests[3].width must be ...` when the message begins with the field it is about (the
 * options' and the URL checks' messages do), else `requests[3]: ...`.
 */
function nameRequest(at: string, message: string): string {
  const first = /^[a-z_]+/.exec(message)?.[0];
  return first !== undefined && OPTION_NAMES.has(first) ? `${at}.${message}` : `${at}: ${message}`;
}

/**
 * Refuses, before any unit is held, a batch the month cannot cover: the quota's own 402,
 * its message saying how many units the batch needs. (Holding units one by one and finding
 * the month short half-way would refuse other captures meanwhile.)
 */
async function enoughQuota(
  ctx: JobContext,
  user: User,
  plan: Readonly<Plan>,
  count: number,
): Promise<void> {
  const limit = plan.monthly_quota ?? 0;
  const period = monthBounds(ctx.clock());
  const used = await ctx.store.quota.used(user.id, period.key);
  if (used + count <= limit) return;
  throw new AppError(
    'quota_exceeded',
    `monthly quota exceeded: the batch needs ${count} units, ${Math.max(0, limit - used)} remain`,
    { body: { plan: plan.name, used: Math.max(used, 0), limit, resets_at: toIso(period.end) } },
  );
}

/** The quota's 402 from a reservation, with the batch's need in its message. */
function quotaShort(err: AppError, count: number, held: number): AppError {
  return new AppError(
    'quota_exceeded',
    `monthly quota exceeded: the batch needs ${count} units, only ${held} were left`,
    { ...(err.body ? { body: err.body } : {}) },
  );
}
