import { randomToken } from '../../lib/crypto.ts';
import { HOUR_MS, toIso } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';
import { reserveMonthly } from '../captures/capture-screenshot.ts';
import { imageUrl } from '../captures/ports.ts';
import { AppError, isAppError } from '../errors.ts';
import { holdLost, jobRow } from '../jobs/enqueue-capture.ts';
import { newDeliveryId, newJobId } from '../jobs/job-answer.ts';
import { openCredentials } from '../jobs/job-credentials.ts';
import type { MonitorRunEnds } from '../jobs/ports.ts';
import type { Plan } from '../plans.ts';
import type {
  CaptureJob,
  Monitor,
  MonitorRun,
  MonitorRunEnd,
  NewDelivery,
  ScreenshotRecord,
} from '../store.ts';
import { deleteImageFiles, type FileDeleteError, runInput } from './manage-monitors.ts';
import { BASELINE_EXPIRES_AT, newRunId } from './monitor-rules.ts';
import type { MonitorContext, RunEndContext } from './ports.ts';

/**
 * Starts a run (docs/api.md, "Monitors"): one unit of the month held, the run recorded and
 * the async capture job that carries it queued, in one transaction; the job's worker ends
 * the run (`monitorRunEnds`). A month without a unit left pauses the monitor
 * (`paused_quota`) rather than failing every slot; a scheduled slot of a monitor paused so
 * looks whether the month has room again, resumes it if so, and records nothing if not.
 * Returns the run, or null when nothing was recorded.
 */
export async function startRun(
  ctx: MonitorContext,
  monitor: Monitor,
  options: { scheduled: boolean },
): Promise<MonitorRun | null> {
  const user = await ctx.store.users.findById(monitor.userId);
  if (user === null) return null; // the account is gone, its monitors with it (cascade)
  const plan = ctx.plans[user.plan];
  const now = ctx.clock();
  // One run of a monitor at a time: a slot that finds the last one still queued or rendering
  // (a deep queue) records nothing, and a run now waits for it (409), so neither piles up.
  if (await ctx.store.monitors.hasRunning(monitor.id)) {
    if (options.scheduled) return null;
    throw new AppError(
      'conflict',
      'a run of this monitor is already queued or rendering; run it again once that one has ended',
    );
  }
  const ended = async (end: (runId: string) => MonitorRunEnd): Promise<MonitorRun> => {
    const run = await ctx.store.monitors.insertRun({
      id: newRunId(),
      monitorId: monitor.id,
      at: now,
    });
    await ctx.store.monitors.finishRun({ monitorId: monitor.id, runId: run.id }, end(run.id), now);
    return (await ctx.store.monitors.getRun(monitor.id, run.id)) ?? run;
  };
  if (plan.max_monitors === 0) {
    // The account left the plan its monitors were made on: paused, charged nothing, until
    // it comes back and resumes them.
    const message = `monitors are not available on the ${plan.name} plan`;
    return ended((runId) => ({
      ...failure(monitor, runId, message, true, now),
      monitor: { lastRunAt: now, status: 'paused' },
    }));
  }
  let allowance: Awaited<ReturnType<typeof reserveMonthly>>;
  try {
    allowance = await reserveMonthly(ctx, user, { hold: true });
  } catch (err) {
    if (!isAppError(err) || err.code !== 'quota_exceeded') throw err;
    if (options.scheduled && monitor.status === 'paused_quota') return null;
    return ended((runId) => failure(monitor, runId, err.message, true, now));
  }
  const hold = allowance.hold as number;
  const runId = newRunId();
  const jobId = newJobId();
  try {
    const options = openCredentials(ctx.secrets, monitor.id, monitor.input.options);
    const capture = runInput({ ...monitor, input: { ...monitor.input, options } }, plan);
    const job = {
      ...jobRow(ctx, {
        id: jobId,
        userId: user.id,
        keyId: null,
        capture,
        webhookUrl: null,
        allowance,
        createdAt: now,
      }),
      monitorRunId: runId,
    };
    // The unit's hold ends as the job takes it: a node that dies in between leaves the unit
    // to come back, never a run without its job.
    const run = await ctx.store.transaction(async (tx) => {
      const run = await tx.monitors.insertRun({ id: runId, monitorId: monitor.id, at: now });
      await tx.jobs.create(job);
      // The month has room again: a monitor paused on its quota runs on.
      if (monitor.status === 'paused_quota') await tx.monitors.resumeFromQuota(monitor.id);
      if (!(await tx.quota.keep(hold))) throw holdLost();
      return run;
    });
    ctx.quotaHolds.forget(hold);
    // Durable from here: a dispatch that fails (Redis away) is retried by the jobs' sweep.
    await ctx.jobs.dispatch(jobId).catch(() => {});
    return run;
  } catch (err) {
    await allowance.release();
    throw err;
  }
}

/**
 * How a run ends, told by the worker of the job that carries it (domain/jobs/run-job.ts):
 * its capture compared with the monitor's baseline, or its failure counted. The run's end,
 * the monitor's new state, the baseline's expiry and the webhook delivery are one
 * transaction, written once (a run already ended is left as it is).
 *
 * A run's images are its monitor's alone: its capture is cached under the monitor's own
 * scope (`wanted`), never shared with the account's other captures, so deleting the monitor
 * deletes them and nothing else. Images a run stored that its end does not show (its monitor
 * was deleted meanwhile, the run had ended already, the comparison failed) are deleted at
 * once, unless another run of the monitor shows them; `onFileError` hears of a stored file
 * that could not be deleted (the orphan sweep takes it later).
 */
export function monitorRunEnds(
  ctx: RunEndContext,
  options: { onFileError?: FileDeleteError } = {},
): MonitorRunEnds {
  const release = async (job: CaptureJob, records: Array<ScreenshotRecord | null>) => {
    const ids = records.flatMap((r) => (r === null ? [] : [r.id]));
    const released = await ctx.store.monitors.releaseRunImages(job.userId, ids);
    await deleteImageFiles(ctx, released, options.onFileError);
  };
  const owner = async (job: CaptureJob) => {
    const runId = job.monitorRunId;
    const monitor = runId === null ? null : await ctx.store.monitors.getByRun(runId);
    const user = monitor === null ? null : await ctx.store.users.findById(monitor.userId);
    // Deleted since (its runs with it); a job's run is always its own account's monitor's.
    if (runId === null || monitor === null || user === null || monitor.userId !== job.userId) {
      return null;
    }
    return { runId, monitor, plan: ctx.plans[user.plan] };
  };
  return {
    async wanted(job) {
      return (await owner(job))?.monitor.id ?? null;
    },
    async succeeded(job, record) {
      const run = await owner(job);
      // Deleted while it rendered: what it stored goes now, not at the end of its retention.
      if (run === null) return release(job, [record]);
      const { runId, monitor, plan } = run;
      let end: MonitorRunEnd;
      let diff: ScreenshotRecord | null = null;
      try {
        ({ end, diff } = await compareRun(ctx, monitor, runId, plan, record));
      } catch (err) {
        const message = isAppError(err) ? err.message : 'internal error';
        end = failure(monitor, runId, message, false, ctx.clock());
      }
      const finished = await ctx.store.monitors.finishRun(
        { monitorId: monitor.id, runId },
        end,
        ctx.clock(),
      );
      // False: the monitor was deleted since (its delete did not see these images), or the
      // run had ended already. Either way no run shows them.
      if (!finished || end.run.screenshotId === null) await release(job, [record, diff]);
    },
    async failed(job, error) {
      const run = await owner(job);
      if (run === null) return;
      const end = failure(run.monitor, run.runId, error, false, ctx.clock());
      await ctx.store.monitors.finishRun(
        { monitorId: run.monitor.id, runId: run.runId },
        end,
        ctx.clock(),
      );
    },
  };
}

/**
 * A successful capture compared with the baseline: the run's end it makes, and the diff it
 * stored, if any.
 */
async function compareRun(
  ctx: RunEndContext,
  monitor: Monitor,
  runId: string,
  plan: Readonly<Plan>,
  record: ScreenshotRecord,
): Promise<{ end: MonitorRunEnd; diff: ScreenshotRecord | null }> {
  const now = ctx.clock();
  const baseline =
    monitor.baselineId === null
      ? null
      : await ctx.store.screenshots.findForUser(monitor.userId, monitor.baselineId, now);
  let changed = false;
  let fraction = 0;
  let diff: ScreenshotRecord | null = null;
  if (baseline !== null) {
    const [before, after] = await Promise.all([
      ctx.storage.get(`${baseline.token}.${baseline.ext}`),
      ctx.storage.get(`${record.token}.${record.ext}`),
    ]);
    if (before !== null && after !== null) {
      const comparison = await ctx.comparer.compare(before.body, after.body, {
        threshold: monitor.threshold,
      });
      fraction = comparison.changedFraction;
      changed = fraction >= monitor.threshold;
      if (changed && comparison.diff !== null) {
        diff = await storeDiff(ctx, record, comparison.diff);
      }
    }
  }
  const url = imageUrl(ctx, record);
  const diffUrl = diff === null ? null : imageUrl(ctx, diff);
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
  const end: MonitorRunEnd = {
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
  return { end, diff };
}

/**
 * The diff beside the run's image: a record of its own (not listable, not cacheable) so it
 * is served at /images like any image and swept with the plan's retention.
 */
async function storeDiff(
  ctx: RunEndContext,
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
      // A monitor the account paused (a run now) stays paused.
      ...(quota
        ? monitor.status === 'paused'
          ? {}
          : { status: 'paused_quota' as const }
        : { failures }),
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
