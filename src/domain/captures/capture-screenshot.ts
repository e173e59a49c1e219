import { retryInBackground } from '../../lib/retry.ts';
import { dayBounds, monthBounds, toIso } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { ScreenshotRecord, User } from '../store.ts';
import { type CaptureInput, cacheKeyFor, resolveCaptureOptions } from './capture-options.ts';
import { CAPTURE_LIMITS, type CaptureContext } from './ports.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';

export interface CaptureOutcome {
  record: ScreenshotRecord;
  cached: boolean;
  quota: { used: number; limit: number };
  /** Milliseconds the browser spent; null for a cache hit. */
  renderMs: number | null;
}

const unauthorized = () => new AppError('unauthorized', 'unauthorized');

/**
 * POST /v1/screenshots after authentication and the per-minute rate: validation and plan
 * rules (400), the monthly quota (402), the cache, then the address check and the render.
 * A quota unit is reserved atomically before the cache lookup (hits count) and given back
 * if anything after it fails; a revocation of the request's key ends it with 401 and
 * returns the unit.
 */
export async function captureScreenshot(
  ctx: CaptureContext,
  options: { user: User; keyId: number; input: CaptureInput },
): Promise<CaptureOutcome> {
  const { user, keyId, input } = options;
  const plan = ctx.plans[user.plan];
  const url = ctx.guard.parse(input.url);
  const render = resolveCaptureOptions(input, url, plan);
  ctx.guard.screen(url);

  const revoked = new AbortController();
  const unsubscribe = ctx.revocations.subscribe((id) => {
    if (id !== keyId) return;
    // An event is a hint, the key row decides: anyone who can NOTIFY on a shared database
    // (no privilege needed) or publish on a shared Redis could send one.
    ctx.store.keys.isActive(keyId).then(
      (active) => {
        if (!active) revoked.abort(unauthorized());
      },
      () => {}, // the check before the answer still runs
    );
  });
  try {
    const limit = plan.monthly_quota ?? 0;
    const period = monthBounds(ctx.clock());
    const used = await ctx.store.quota.reserve(user.id, period.key, limit);
    if (used === null) {
      throw new AppError('quota_exceeded', 'monthly quota exceeded', {
        body: {
          plan: plan.name,
          used: Math.max(limit, await ctx.store.quota.used(user.id, period.key)),
          limit,
          resets_at: toIso(period.end),
        },
      });
    }
    try {
      const outcome = await cachedOrRendered(ctx, {
        user,
        url,
        render,
        input,
        signal: revoked.signal,
      });
      if (revoked.signal.aborted) throw unauthorized();
      // Every answer, a cache hit or a joined render included: a revocation that landed
      // after authentication (or whose event was lost) is caught here at the latest,
      // before the image URL leaves.
      if (!(await ctx.store.keys.isActive(keyId))) throw unauthorized();
      await ctx.store.quota.countDay(user.id, dayBounds(ctx.clock()).key);
      return { ...outcome, quota: { used, limit } };
    } catch (err) {
      // Given back even when the database is down right now (retried until it is back), so
      // an outage never leaves a unit spent on a capture that was not delivered.
      await retryInBackground(() => ctx.store.quota.release(user.id, period.key));
      throw revoked.signal.aborted ? unauthorized() : err;
    }
  } finally {
    unsubscribe();
  }
}

async function cachedOrRendered(
  ctx: CaptureContext,
  options: {
    user: User;
    url: URL;
    render: ReturnType<typeof resolveCaptureOptions>;
    input: CaptureInput;
    signal: AbortSignal;
  },
): Promise<Omit<CaptureOutcome, 'quota'>> {
  const plan = ctx.plans[options.user.plan];
  // The plan is part of the key: a record's retention and listability come from the plan it
  // was made on, so an upgrade or downgrade must not be answered with the other plan's record.
  const cacheKey = cacheKeyFor(`user:${options.user.id}:${plan.name}`, options.render);
  const now = ctx.clock();
  if (options.input.fresh !== true) {
    const hit = await ctx.store.screenshots.findCached(
      cacheKey,
      now - CAPTURE_LIMITS.cacheTtlMs,
      now,
    );
    if (hit) return { record: hit, cached: true, renderMs: null };
  }
  // DNS only now: a cache hit needs none, and a refusal here still returns the quota unit.
  await ctx.guard.check(options.url, `user:${options.user.id}`);
  return renderOnce(ctx, {
    cacheKey,
    fresh: options.input.fresh === true,
    signal: options.signal,
    render: (signal) =>
      renderAndStore(ctx, {
        userId: options.user.id,
        client: { id: `user:${options.user.id}`, maxConcurrent: plan.concurrent_renders },
        plan,
        render: options.render,
        cacheKey,
        signal,
      }),
  });
}
