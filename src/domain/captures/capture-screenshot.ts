import { retryInBackground } from '../../lib/retry.ts';
import { dayBounds, monthBounds, toIso } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { User } from '../store.ts';
import type { CaptureInput } from './capture-options.ts';
import type { CaptureContext } from './ports.ts';
import {
  type Allowance,
  type CaptureCaller,
  type CaptureOutcome,
  perRender,
  perRequest,
  type RenderChargedOutcome,
  runCapture,
} from './run-capture.ts';

export type { CaptureOutcome, RenderChargedOutcome } from './run-capture.ts';

const unauthorized = () => new AppError('unauthorized', 'unauthorized');

/**
 * POST /v1/screenshots after authentication and the per-minute rate: the capture pipeline
 * for an account, its plan and its monthly quota. A unit is reserved atomically before the
 * cache lookup (hits count); a revocation of the request's key ends the capture with 401
 * and returns the unit.
 */
export function captureScreenshot(
  ctx: CaptureContext,
  options: { user: User; keyId: number; input: CaptureInput },
): Promise<CaptureOutcome> {
  return underKey(ctx, options.keyId, (signal) =>
    runCapture(ctx, {
      input: options.input,
      caller: { ...keyCaller(ctx, options.user, options.keyId, signal), charge: perRequest },
    }),
  );
}

/**
 * GET /v1/render after the link's signature and the key's window of link requests: the same
 * capture under the key's account, charged per render (docs/api.md, "Signed render links"):
 * a cache hit, or a request that joins a render in flight, costs no unit; a render costs
 * one, taken before it starts (402 when the quota is spent).
 */
export function captureForLink(
  ctx: CaptureContext,
  options: { user: User; keyId: number; input: CaptureInput },
): Promise<RenderChargedOutcome> {
  return underKey(ctx, options.keyId, (signal) =>
    runCapture(ctx, {
      input: options.input,
      caller: { ...keyCaller(ctx, options.user, options.keyId, signal), charge: perRender },
    }),
  );
}

/** The account's caller: its client, its cache, its monthly quota, the key checked. */
function keyCaller(
  ctx: CaptureContext,
  user: User,
  keyId: number,
  signal: AbortSignal,
): Omit<CaptureCaller, 'charge'> {
  const plan = ctx.plans[user.plan];
  return {
    client: `user:${user.id}`,
    // The plan is part of the key: a record's retention and listability come from the
    // plan it was made on, so an upgrade or downgrade must not be answered with the
    // other plan's record.
    cacheOwner: `user:${user.id}:${plan.name}`,
    userId: user.id,
    plan,
    reserve: (options?: { hold?: boolean }) => reserveMonthly(ctx, user, options),
    signal,
    // Every answer, a cache hit or a joined render included: a revocation that landed
    // after authentication (or whose event was lost) is caught before the image URL
    // leaves (run-capture.ts reads the key with the cache lookup, or after the render).
    keyId,
  };
}

/** Runs `work` with a signal that aborts when the key is revoked meanwhile. */
async function underKey<T>(
  ctx: CaptureContext,
  keyId: number,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
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
    return await work(revoked.signal);
  } finally {
    unsubscribe();
  }
}

/**
 * One unit of the account's monthly quota (402 when it is spent), and how to give it back.
 * `hold` (a render is about to run): the unit is held in the same write, renewed while the
 * capture runs and kept when it delivers, so a node that dies mid-render does not keep it
 * (domain/quota/quota-holds.ts). A cache hit needs no hold: it delivers at once.
 */
export async function reserveMonthly(
  ctx: CaptureContext,
  user: User,
  options: { hold?: boolean } = {},
): Promise<Allowance & { period: string; day: string; hold: number | null }> {
  const plan = ctx.plans[user.plan];
  const limit = plan.monthly_quota ?? 0;
  const now = ctx.clock();
  const period = monthBounds(now);
  // The unit counts in the usage chart's day from the reservation, in the same write, and
  // leaves it with the unit: the days of a month always add up to its `used`.
  const day = dayBounds(now).key;
  const { quota } = ctx.store;
  const unit = { userId: user.id, period: period.key, day };
  const taken = options.hold
    ? await quota.reserveHeld(unit, { limit, until: ctx.quotaHolds.until() })
    : await quota
        .reserve(unit, { limit })
        .then((used) => (used === null ? null : { used, hold: null }));
  if (!taken) {
    throw new AppError('quota_exceeded', 'monthly quota exceeded', {
      body: {
        plan: plan.name,
        used: Math.max(limit, await ctx.store.quota.used(user.id, period.key)),
        limit,
        resets_at: toIso(period.end),
      },
    });
  }
  const { used, hold } = taken;
  if (hold === null) {
    return {
      period: period.key,
      day,
      hold,
      quota: { used, limit },
      // Given back even when the database is down right now (retried until it is back), so
      // an outage never leaves a unit spent on a capture that was not delivered.
      release: () => retryInBackground(() => quota.release(unit)),
    };
  }
  ctx.quotaHolds.track(hold);
  return {
    period: period.key,
    day,
    hold,
    quota: { used, limit },
    // Once: the hold's row decides (a retry after an outage, or the sweep of a hold that
    // expired meanwhile, never gives the unit back twice).
    release: async () => {
      ctx.quotaHolds.forget(hold);
      await retryInBackground(() => quota.releaseHeld(hold));
    },
    keep: async () => {
      ctx.quotaHolds.forget(hold);
      // Swept meanwhile (this node lost the database for a whole lease): the unit went back,
      // but the image is delivered, so it is taken again, past the limit if need be.
      if (!(await quota.keep(hold))) await quota.reserve(unit, { limit: MAX_UNITS });
    },
  };
}

/** A limit no account reaches (PostgreSQL's integer): a unit taken again once delivered. */
const MAX_UNITS = 2_147_483_647;
