import { randomToken } from '../../lib/crypto.ts';
import { HOUR_MS, toIso } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';
import { reserveMonthly } from '../captures/capture-screenshot.ts';
import { imageUrl } from '../captures/ports.ts';
import { runCapture } from '../captures/run-capture.ts';
import { isAppError } from '../errors.ts';
import { newDeliveryId } from '../jobs/job-answer.ts';
import { openCredentials } from '../jobs/job-credentials.ts';
import type { Plan } from '../plans.ts';
import type {
  Monitor,
  MonitorRun,
  MonitorRunEnd,
  NewDelivery,
  ScreenshotRecord,
} from '../store.ts';
import { runInput } from './manage-monitors.ts';
import { BASELINE_EXPIRES_AT, newRunId } from './monitor-rules.ts';
import type { MonitorContext } from './ports.ts';

/** Records the run as running and starts it; the caller may wait for it or not. */
export async function startRun(
  ctx: MonitorContext,
  monitor: Monitor,
): Promise<{ run: MonitorRun; done: Promise<void> }> {
  const run = await ctx.store.monitors.insertRun({
    id: newRunId(),
    monitorId: monitor.id,
    at: ctx.clock(),
  });
  return { run, done: runMonitor(ctx, monitor, run.id) };
}

/**
 * One run (docs/api.md, "Monitors"): a capture through the ordinary pipeline, charged one
 * unit as any capture (given back if it fails), compared with the monitor's baseline. A
 * month without a unit left pauses the monitor (`paused_quota`) rather than failing every
 * slot. The run's end, the monitor's new state, the baseline's expiry and the webhook
 * delivery are one transaction.
 */
export async function runMonitor(
  ctx: MonitorContext,
  monitor: Monitor,
  runId: string,
): Promise<void> {
  const now = () => ctx.clock();
  const finish = (end: MonitorRunEnd) =>
    ctx.store.monitors.finishRun(monitor.id, runId, end, now()).then(() => {});
  const user = await ctx.store.users.findById(monitor.userId);
  if (user === null) return; // the account is gone, its monitors with it (cascade)
  const plan = ctx.plans[user.plan];
  if (plan.max_monitors === 0) {
    // The account left the plan its monitors were made on: paused, charged nothing, until
    // it comes back and resumes them.
    const end = failure(
      monitor,
      runId,
      `monitors are not available on the ${plan.name} plan`,
      true,
      now(),
    );
    await finish({ ...end, monitor: { lastRunAt: now(), status: 'paused' } });
    return;
  }
  let record: ScreenshotRecord;
  try {
    const options = openCredentials(ctx.secrets, monitor.id, monitor.input.options);
    const outcome = await runCapture(ctx, {
      input: runInput({ ...monitor, input: { ...monitor.input, options } }, plan),
      caller: {
        client: `user:${user.id}`,
        cacheOwner: `user:${user.id}:${plan.name}`,
        userId: user.id,
        plan,
        reserve: (options) => reserveMonthly(ctx, user, options),
      },
    });
    record = outcome.record;
  } catch (err) {
    const quota = isAppError(err) && err.code === 'quota_exceeded';
    const message = isAppError(err) ? err.message : 'internal error';
    await finish(failure(monitor, runId, message, quota, now()));
    return;
  }
  try {
    await finish(await compareRun(ctx, monitor, runId, plan, record));
  } catch (err) {
    await finish(
      failure(monitor, runId, isAppError(err) ? err.message : 'internal error', false, now()),
    );
  }
}

/** A successful capture compared with the baseline, and the run's end it makes. */
async function compareRun(
  ctx: MonitorContext,
  monitor: Monitor,
  runId: string,
  plan: Readonly<Plan>,
  record: ScreenshotRecord,
): Promise<MonitorRunEnd> {
  const now = ctx.clock();
  const baseline =
    monitor.baselineId === null
      ? null
      : await ctx.store.screenshots.findForUser(monitor.userId, monitor.baselineId, now);
  let changed = false;
  let fraction = 0;
  let diffUrl: string | null = null;
  if (baseline !== null) {
    const [before, after] = await Promise.all([
      ctx.storage.get(`${baseline.token}.${baseline.ext}`),
      ctx.storage.get(`${record.token}.${record.ext}`),
    ]);
    if (before !== null && after !== null) {
      const comparison = await ctx.comparer.compare(before.body, after.body);
      fraction = comparison.changedFraction;
      changed = fraction >= monitor.threshold;
      if (changed && comparison.diff !== null) {
        diffUrl = imageUrl(ctx, await storeDiff(ctx, record, comparison.diff));
      }
    }
  }
  const url = imageUrl(ctx, record);
  const deliveries: NewDelivery[] = [];
  if (changed && monitor.webhookUrl !== null) {
    deliveries.push(
      event(monitor, 'monitor.changed', now, {
        monitor_id: monitor.id,
        run_id: runId,
        changed_fraction: fraction,
        image_url: url,
        previous_image_url: baseline === null ? null : imageUrl(ctx, baseline),
        diff_url: diffUrl,
      }),
    );
  }
  return {
    run: {
      status: 'succeeded',
      changed,
      changedFraction: fraction,
      imageUrl: url,
      diffUrl,
      error: null,
      screenshotId: record.id,
    },
    monitor: {
      lastRunAt: now,
      ...(changed ? { lastChangeAt: now } : {}),
      baselineId: record.id,
      failures: 0,
      failedEventAt: null,
    },
    // This run is the next one's baseline: kept while the monitor exists; the one it
    // replaces goes back to its plan's retention.
    newBaseline: {
      id: record.id,
      expiresAt: BASELINE_EXPIRES_AT,
      retentionMs: plan.retention_hours * HOUR_MS,
    },
    deliveries,
  };
}

/**
 * The diff beside the run's image: a record of its own (not listable, not cacheable) so it
 * is served at /images like any image and swept with the plan's retention.
 */
async function storeDiff(
  ctx: MonitorContext,
  record: ScreenshotRecord,
  diff: Buffer,
): Promise<ScreenshotRecord> {
  const token = randomToken(16);
  await ctx.storage.put(`${token}.png`, diff, {
    contentType: 'image/png',
    expiresAt: new Date(record.expiresAt),
  });
  const { id: _id, ...rest } = record;
  return ctx.store.screenshots.insert({
    ...rest,
    token,
    ext: 'png',
    format: 'png',
    listable: false,
    cacheKey: null,
    metadata: null,
    content: null,
    warnings: [],
  });
}

/** A failed run: counted, `monitor.failed` after enough in a row (then once a day). */
function failure(
  monitor: Monitor,
  runId: string,
  error: string,
  quota: boolean,
  now: number,
): MonitorRunEnd {
  const failures = monitor.failures + 1;
  const due =
    !quota &&
    failures >= BOUNDS.monitors.failuresBeforeEvent &&
    (monitor.failedEventAt === null ||
      now - monitor.failedEventAt >= BOUNDS.monitors.failedEventEveryMs);
  const deliveries: NewDelivery[] = [];
  if (due && monitor.webhookUrl !== null) {
    deliveries.push(
      event(monitor, 'monitor.failed', now, {
        monitor_id: monitor.id,
        run_id: runId,
        failures,
        error,
      }),
    );
  }
  return {
    run: {
      status: 'failed',
      changed: null,
      changedFraction: null,
      imageUrl: null,
      diffUrl: null,
      error,
      screenshotId: null,
    },
    monitor: {
      lastRunAt: now,
      // A spent month pauses the monitor, and that is not a failing page.
      ...(quota ? { status: 'paused_quota' as const } : { failures }),
      ...(due ? { failedEventAt: now } : {}),
    },
    deliveries,
  };
}

function event(
  monitor: Monitor,
  type: string,
  now: number,
  data: Record<string, unknown>,
): NewDelivery {
  return {
    id: newDeliveryId(),
    userId: monitor.userId,
    jobId: monitor.id,
    url: monitor.webhookUrl as string,
    eventType: type,
    payload: JSON.stringify({ type, timestamp: toIso(now), data }),
  };
}
