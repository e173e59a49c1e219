import { retryInBackground } from '../../lib/retry.ts';
import { dayBounds, monthBounds, toIso } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { User } from '../store.ts';
import type { CaptureInput } from './capture-options.ts';
import type { CaptureContext } from './ports.ts';
import { type Allowance, type CaptureOutcome, runCapture } from './run-capture.ts';

export type { CaptureOutcome } from './run-capture.ts';

const unauthorized = () => new AppError('unauthorized', 'unauthorized');

/**
 * POST /v1/screenshots after authentication and the per-minute rate: the capture pipeline
 * for an account, its plan and its monthly quota. A unit is reserved atomically before the
 * cache lookup (hits count); a revocation of the request's key ends the capture with 401
 * and returns the unit.
 */
export async function captureScreenshot(
  ctx: CaptureContext,
  options: { user: User; keyId: number; input: CaptureInput },
): Promise<CaptureOutcome> {
  const { user, keyId } = options;
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
    const plan = ctx.plans[user.plan];
    return await runCapture(ctx, {
      input: options.input,
      caller: {
        client: `user:${user.id}`,
        // The plan is part of the key: a record's retention and listability come from the
        // plan it was made on, so an upgrade or downgrade must not be answered with the
        // other plan's record.
        cacheOwner: `user:${user.id}:${plan.name}`,
        userId: user.id,
        plan,
        reserve: () => reserveMonthly(ctx, user),
        signal: revoked.signal,
        // Every answer, a cache hit or a joined render included: a revocation that landed
        // after authentication (or whose event was lost) is caught before the image URL
        // leaves (run-capture.ts reads the key with the cache lookup, or after the render).
        keyId,
      },
    });
  } finally {
    unsubscribe();
  }
}

/** One unit of the account's monthly quota (402 when it is spent), and how to give it back. */
export async function reserveMonthly(
  ctx: CaptureContext,
  user: User,
): Promise<Allowance & { period: string; day: string }> {
  const plan = ctx.plans[user.plan];
  const limit = plan.monthly_quota ?? 0;
  const now = ctx.clock();
  const period = monthBounds(now);
  // The unit counts in the usage chart's day from the reservation, in the same write, and
  // leaves it with the unit: the days of a month always add up to its `used`.
  const day = dayBounds(now).key;
  const used = await ctx.store.quota.reserve(user.id, period.key, limit, day);
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
  return {
    period: period.key,
    day,
    quota: { used, limit },
    // Given back even when the database is down right now (retried until it is back), so
    // an outage never leaves a unit spent on a capture that was not delivered.
    release: () => retryInBackground(() => ctx.store.quota.release(user.id, period.key, day)),
  };
}
