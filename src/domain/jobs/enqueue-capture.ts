import type { CaptureInput } from '../captures/capture-options.ts';
import { resolveCaptureOptions } from '../captures/capture-options.ts';
import { reserveMonthly } from '../captures/capture-screenshot.ts';
import { captureTarget } from '../captures/capture-target.ts';
import type { TargetGuard } from '../captures/ports.ts';
import { callerProxyHost } from '../captures/proxy-directory.ts';
import { destinationFor } from '../destinations/deliver.ts';
import { AppError, isAppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { CaptureJob, NewJob, User } from '../store.ts';
import { newJobId } from './job-answer.ts';
import { sealCredentials } from './job-credentials.ts';
import type { JobContext } from './ports.ts';

/**
 * POST /v1/screenshots with `async: true` (docs/api.md, "Async captures"), after
 * authentication and the per-minute rate: the same validation as a synchronous capture (400s
 * cost nothing), the webhook URL under a target's address rules, one quota unit reserved
 * (402), the account's bound of open jobs (429), then the job is written and dispatched. The
 * unit stays with the job until it succeeds, or goes back when it fails.
 */
export async function enqueueCapture(
  ctx: JobContext,
  options: { user: User; keyId: number; input: CaptureInput },
): Promise<CaptureJob> {
  const { user, keyId, input } = options;
  const plan = ctx.plans[user.plan];
  const { async: _async, webhook_url: hook, ...capture } = input;
  checkCapture(ctx, plan, input);
  if (input.storage)
    await destinationFor(ctx, user.id, { ...input.storage, path: '', hosted: true });
  const webhookUrl = hook === undefined ? null : await checkWebhookUrl(ctx.guard, hook, user);
  const id = newJobId();

  // Held until the job's row holds it: the job and the end of the hold are one transaction,
  // so a node that dies in between leaves the unit to come back, never a job without one.
  const allowance = await reserveMonthly(ctx, user, { hold: true });
  const hold = allowance.hold as number;
  try {
    const job = await ctx.store.transaction(async (tx) => {
      const created = await tx.jobs.createWithinLimit(
        jobRow(ctx, {
          id,
          userId: user.id,
          keyId,
          capture,
          webhookUrl,
          allowance,
          createdAt: ctx.clock(),
        }),
        plan.max_queued_jobs,
      );
      if (created !== 'limit_reached' && !(await tx.quota.keep(hold))) throw holdLost();
      return created;
    });
    if (job === 'limit_reached') throw tooManyJobs(plan.max_queued_jobs, plan.name, ctx.clock());
    ctx.quotaHolds.forget(hold);
    // Durable from here: a dispatch that fails (Redis away) is retried by the sweep.
    await ctx.jobs.dispatch(job.id).catch(() => {});
    return job;
  } catch (err) {
    await allowance.release();
    throw err;
  }
}

/**
 * What an async capture is checked for before anything is held (400s cost nothing): the
 * plan's rules, the target's screen without DNS (its address is checked when it runs), and
 * its proxy as a synchronous capture's is (an operator's id or country, the caller's host
 * screened). A batch checks each of its requests with it too (enqueue-batch.ts).
 */
export function checkCapture(
  ctx: Pick<JobContext, 'guard' | 'proxies'>,
  plan: Readonly<Plan>,
  input: CaptureInput,
): void {
  const target = captureTarget(ctx.guard, input);
  const { render } = resolveCaptureOptions(input, target.navigation, plan);
  if (target.checked !== null) ctx.guard.screen(target.checked);
  ctx.proxies.check(render.proxy);
  const proxyHost = callerProxyHost(render.proxy);
  if (proxyHost !== null) ctx.guard.screenProxy(proxyHost.host, proxyHost.port);
}

/** A queued job's row: its unit's hold, and its credentials encrypted at rest. */
export function jobRow(
  ctx: Pick<JobContext, 'secrets'>,
  job: {
    id: string;
    userId: number;
    /** Null for a monitor's run: no key asked for it. */
    keyId: number | null;
    capture: Record<string, unknown>;
    webhookUrl: string | null;
    allowance: Pick<NewJob, 'period' | 'day' | 'quota'>;
    createdAt: number;
  },
): NewJob {
  const { allowance } = job;
  return {
    id: job.id,
    userId: job.userId,
    keyId: job.keyId,
    // Credentials for the target are encrypted at rest (job-credentials.ts).
    input: sealCredentials(ctx.secrets, job.id, job.capture),
    webhookUrl: job.webhookUrl,
    period: allowance.period,
    day: allowance.day,
    quota: allowance.quota,
    createdAt: job.createdAt,
  };
}

/** A target's rules, the messages naming `webhook_url`. */
export async function checkWebhookUrl(
  guard: TargetGuard,
  raw: string,
  user: User,
): Promise<string> {
  try {
    const url = guard.parse(raw);
    guard.screen(url);
    await guard.check(url, `user:${user.id}`);
    return url.href;
  } catch (err) {
    if (!isAppError(err)) throw err;
    const message = /^url\b/.test(err.message)
      ? err.message.replace(/^url\b/, 'webhook_url')
      : `webhook_url: ${err.message}`;
    // A name that does not resolve is the request's problem here, not a target's 502.
    const code = err.code === 'target_unreachable' ? 'url_not_allowed' : err.code;
    throw new AppError(code, message);
  }
}

const RETRY_SECONDS = 5;

/** The hold expired before the job was written (the database was away for a whole lease). */
export const holdLost = (): AppError =>
  new AppError('overloaded', 'the capture could not be queued in time, retry shortly', {
    headers: { 'Retry-After': String(RETRY_SECONDS) },
  });

export function tooManyJobs(
  max: number,
  plan: string,
  now: number,
  message = `${max} async captures are already queued or rendering (the ${plan} plan's max_queued_jobs); retry when one has finished.`,
): AppError {
  return new AppError('rate_limited', 'too many queued jobs', {
    body: {
      message,
      success: false,
      limit: max,
      used: max,
      remaining: 0,
      reset_time: Math.ceil(now / 1000) + RETRY_SECONDS,
      plan,
    },
    headers: { 'Retry-After': String(RETRY_SECONDS) },
  });
}
