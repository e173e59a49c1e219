import { BOUNDS } from '../bounds.ts';
import type { CaptureInput } from '../captures/capture-options.ts';
import { storedKeys } from '../captures/formats.ts';
import { decodeCursor, encodeCursor } from '../captures/list-screenshots.ts';
import { planRestriction } from '../captures/options/define.ts';
import { destinationFor } from '../destinations/deliver.ts';
import { AppError, isAppError } from '../errors.ts';
import { checkCapture, checkWebhookUrl } from '../jobs/enqueue-capture.ts';
import { sealCredentials } from '../jobs/job-credentials.ts';
import type { Plan } from '../plans.ts';
import type { Monitor, MonitorInput, MonitorRun, ScreenshotRecord, User } from '../store.ts';
import { EVERY, type Every, htmlDigest, newMonitorId, nextRunAt } from './monitor-rules.ts';
import type { MonitorContext } from './ports.ts';

export interface CreateMonitorInput {
  name?: string;
  url?: string;
  html?: string;
  options?: Record<string, unknown>;
  every: Every;
  threshold?: number;
  ignore_selectors?: string[];
  webhook_url?: string;
}

/** Capture fields a monitor's options may not hold: a run is neither async nor answered. */
const NOT_IN_OPTIONS = ['async', 'response_type', 'webhook_url', 'url', 'html', 'markdown'];

/**
 * The capture a run of this monitor makes: its target and options, the ignored selectors
 * hidden with the options' own, and fresh where the plan allows it (a cached image would
 * compare as unchanged whatever the page became).
 */
export function runInput(
  monitor: Pick<Monitor, 'input' | 'ignoreSelectors'>,
  plan: Readonly<Plan>,
): CaptureInput {
  const { url, html, options } = monitor.input;
  const hidden = [
    ...((options.hide_selectors as string[] | undefined) ?? []),
    ...monitor.ignoreSelectors,
  ];
  return {
    ...options,
    ...(url !== undefined ? { url } : {}),
    ...(html !== undefined ? { html } : {}),
    ...(hidden.length > 0 ? { hide_selectors: hidden } : {}),
    ...(plan.fresh ? { fresh: true } : {}),
  } as CaptureInput;
}

/** Pro only: a plan without monitors is refused as other Pro features are. */
function checkPlan(plan: Readonly<Plan>): void {
  if (plan.max_monitors === 0) throw planRestriction('monitors', plan);
}

function checkEvery(every: Every, plan: Readonly<Plan>): void {
  if (EVERY[every] < plan.min_monitor_interval * 60_000) {
    throw new AppError(
      'plan_restriction',
      `every: the ${plan.name} plan runs monitors at most every ${plan.min_monitor_interval} minutes (min_monitor_interval)`,
    );
  }
}

/** The options as a capture checks them, the messages naming `options.<field>`. */
function checkOptions(
  ctx: MonitorContext,
  plan: Readonly<Plan>,
  input: MonitorInput,
  ignore: string[],
): void {
  for (const field of NOT_IN_OPTIONS) {
    if (field in input.options) {
      throw new AppError('invalid_request', `options.${field}: not allowed in a monitor's options`);
    }
  }
  const copy = input.options.storage as { hosted?: unknown } | undefined;
  if (copy?.hosted === false) {
    throw new AppError(
      'invalid_request',
      'options.storage.hosted: a monitor compares each run with the last image it keeps here',
    );
  }
  if (input.options.format === 'pdf') {
    throw new AppError(
      'invalid_request',
      'options.format: a monitor compares images; pdf is not one',
    );
  }
  const hidden =
    ((input.options.hide_selectors as string[] | undefined) ?? []).length + ignore.length;
  if (hidden > BOUNDS.capture.maxHideSelectors) {
    throw new AppError(
      'invalid_request',
      `ignore_selectors: with options.hide_selectors at most ${BOUNDS.capture.maxHideSelectors} selectors`,
    );
  }
  try {
    checkCapture(ctx, plan, runInput({ input, ignoreSelectors: ignore }, plan));
  } catch (err) {
    if (!isAppError(err)) throw err;
    // The target keeps its own name (url, html); an option's message is renamed.
    if (/^(url|html)\b/.test(err.message) || err.code === 'url_not_allowed') throw err;
    throw new AppError(err.code, `options.${err.message}`, {
      exposeCode: err.code !== 'invalid_request',
    });
  }
}

/** POST /v1/monitors (docs/api.md, "Monitors"). */
export async function createMonitor(
  ctx: MonitorContext,
  options: { user: User; body: CreateMonitorInput },
): Promise<Monitor> {
  const { user, body } = options;
  const plan = ctx.plans[user.plan];
  checkPlan(plan);
  if ((body.url === undefined) === (body.html === undefined)) {
    throw new AppError('invalid_request', 'url: give exactly one of url and html');
  }
  checkEvery(body.every, plan);
  const input: MonitorInput = {
    ...(body.url !== undefined ? { url: body.url } : {}),
    ...(body.html !== undefined ? { html: body.html } : {}),
    options: body.options ?? {},
  };
  const ignore = body.ignore_selectors ?? [];
  checkOptions(ctx, plan, input, ignore);
  const copy = input.options.storage as { destination?: unknown } | undefined;
  if (copy !== undefined) {
    await destinationFor(ctx, user.id, {
      destination: String(copy.destination),
      path: '',
      hosted: true,
    }).catch((err: unknown) => {
      throw isAppError(err) ? new AppError(err.code, `options.${err.message}`) : err;
    });
  }
  const webhookUrl =
    body.webhook_url === undefined
      ? null
      : await checkWebhookUrl(ctx.guard, body.webhook_url, user);
  const id = newMonitorId();
  const now = ctx.clock();
  // Credentials for the target (headers, cookies, http_auth) are encrypted at rest, bound to
  // the monitor's id, as a queued job's are (docs/security.md, "Credentials at rest").
  const stored: MonitorInput = {
    ...input,
    ...(input.html !== undefined ? { htmlDigest: htmlDigest(input.html) } : {}),
    options: sealCredentials(ctx.secrets, id, input.options),
  };
  const created = await ctx.store.monitors.createWithinLimit(
    {
      id,
      userId: user.id,
      name: body.name ?? null,
      input: stored,
      every: body.every,
      threshold: body.threshold ?? 0.001,
      ignoreSelectors: ignore,
      webhookUrl,
      status: 'active',
      nextRunAt: nextRunAt(id, body.every, now),
      createdAt: now,
    },
    plan.max_monitors,
  );
  if (created === 'limit_reached') {
    throw new AppError(
      'plan_restriction',
      `the ${plan.name} plan has at most ${plan.max_monitors} monitors (max_monitors); delete one first`,
    );
  }
  return created;
}

export interface UpdateMonitorInput {
  name?: string;
  status?: 'active' | 'paused';
  every?: Every;
  threshold?: number;
  webhook_url?: string | null;
}

/** PATCH /v1/monitors/{id}: a resumed or re-timed monitor is due at its next slot. */
export async function updateMonitor(
  ctx: MonitorContext,
  options: { user: User; id: string; body: UpdateMonitorInput },
): Promise<Monitor> {
  const { user, id, body } = options;
  const plan = ctx.plans[user.plan];
  checkPlan(plan);
  const current = await getMonitor(ctx, { user, id });
  if (body.every !== undefined) checkEvery(body.every, plan);
  const webhookUrl =
    body.webhook_url === undefined || body.webhook_url === null
      ? body.webhook_url
      : await checkWebhookUrl(ctx.guard, body.webhook_url, user);
  const every = (body.every ?? current.every) as Every;
  const retimed =
    body.every !== undefined || (body.status === 'active' && current.status !== 'active');
  const updated = await ctx.store.monitors.update(user.id, id, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.status !== undefined ? { status: body.status } : {}),
    ...(body.every !== undefined ? { every: body.every } : {}),
    ...(body.threshold !== undefined ? { threshold: body.threshold } : {}),
    ...(webhookUrl !== undefined ? { webhookUrl } : {}),
    ...(retimed ? { nextRunAt: nextRunAt(id, every, ctx.clock()) } : {}),
  });
  if (updated === null) throw notFound();
  return updated;
}

export const notFound = (): AppError => new AppError('not_found', 'monitor not found');

/** Another account's monitor is not found, as any unknown id. */
export async function getMonitor(
  ctx: Pick<MonitorContext, 'store'>,
  options: { user: User; id: string },
): Promise<Monitor> {
  const monitor = await ctx.store.monitors.get(options.user.id, options.id);
  if (monitor === null) throw notFound();
  return monitor;
}

/** A stored file that could not be deleted (logged; the orphan sweep deletes it later). */
export type FileDeleteError = (err: unknown, key: string) => void;

/**
 * DELETE /v1/monitors/{id}: the monitor, its runs and every image of it (each run's image,
 * each diff, the baseline) at once. The records go in the monitor's own transaction, so every
 * image URL answers 404 from the moment this returns (the image route reads the record); the
 * stored files are deleted after, off the request (`filesDeleted`), a few at a time.
 */
export async function deleteMonitor(
  ctx: Pick<MonitorContext, 'store' | 'storage'>,
  options: { user: User; id: string; onFileError?: FileDeleteError },
): Promise<{ filesDeleted: Promise<void> }> {
  const deleted = await ctx.store.monitors.delete(options.user.id, options.id);
  if (deleted === null) throw notFound();
  return { filesDeleted: deleteImageFiles(ctx, deleted.images, options.onFileError) };
}

/**
 * Deletes the stored files (the image and any content files) of records already deleted,
 * `BOUNDS.monitors.imageDeletesAtOnce` at a time. Never rejects: a file that cannot be deleted
 * is reported and left to the orphan sweep, which deletes stored images no record points to
 * (docs/deployment.md, "When a dependency fails"); its URL is 404 already.
 */
export async function deleteImageFiles(
  ctx: Pick<MonitorContext, 'storage'>,
  records: readonly ScreenshotRecord[],
  onError?: FileDeleteError,
): Promise<void> {
  const keys = records.flatMap((record) => storedKeys(record));
  let next = 0;
  const worker = async () => {
    for (let key = keys[next++]; key !== undefined; key = keys[next++]) {
      try {
        await ctx.storage.delete(key);
      } catch (err) {
        onError?.(err, key);
      }
    }
  };
  const workers = Math.min(BOUNDS.monitors.imageDeletesAtOnce, keys.length);
  await Promise.all(Array.from({ length: workers }, worker));
}

/** GET /v1/monitors: newest first, cursor pages as GET /v1/screenshots. */
export async function listMonitors(
  ctx: Pick<MonitorContext, 'store'>,
  options: { user: User; limit: number; cursor: string | undefined },
): Promise<{ items: Monitor[]; nextCursor: string | null }> {
  const beforeSeq = options.cursor ? decodeCursor(options.cursor) : null;
  const rows = await ctx.store.monitors.list(options.user.id, {
    limit: options.limit + 1,
    beforeSeq,
  });
  const items = rows.slice(0, options.limit);
  const last = items.at(-1);
  return { items, nextCursor: rows.length > options.limit && last ? encodeCursor(last.seq) : null };
}

/** GET /v1/monitors/{id}/runs: newest first, cursor pages. */
export async function listRuns(
  ctx: Pick<MonitorContext, 'store'>,
  options: { user: User; id: string; limit: number; cursor: string | undefined },
): Promise<{ items: MonitorRun[]; nextCursor: string | null }> {
  const beforeSeq = options.cursor ? decodeCursor(options.cursor) : null;
  await getMonitor(ctx, options);
  const rows = await ctx.store.monitors.listRuns(options.id, {
    limit: options.limit + 1,
    beforeSeq,
  });
  const items = rows.slice(0, options.limit);
  const last = items.at(-1);
  return {
    items,
    nextCursor: rows.length > options.limit && last ? encodeCursor(last.seq) : null,
  };
}
