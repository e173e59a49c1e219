import type { Plan } from '../plans.ts';
import type { ScreenshotRecord } from '../store.ts';
import { type CaptureInput, cacheKeyFor, resolveCaptureOptions } from './capture-options.ts';
import { CAPTURE_LIMITS, type CaptureContext } from './ports.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';
import type { RenderOptions } from './renderer.ts';

/** One unit of a caller's allowance, held from before the cache lookup to the answer. */
export interface Allowance {
  /** What the answer reports (the API's `quota`). */
  quota: { used: number; limit: number };
  /** The capture was delivered (the API's daily usage chart). */
  commit(): Promise<void>;
  /** Anything after the reservation failed: the unit is given back. */
  release(): Promise<void>;
}

/**
 * Who asks for a capture. The HTTP layer has authenticated it and applied its request rate;
 * the rest is the same for every caller: the API key, the landing-page demo, and what comes
 * later (signed links, async jobs).
 */
export interface CaptureCaller {
  /**
   * `user:<id>` or `demo:<ip, IPv6 by /64>`: its share of render slots, its bound of DNS
   * lookups in flight, and the browser contexts only it renders in.
   */
  client: string;
  /** Whose cache entries these are (never served to anyone else). */
  cacheOwner: string;
  /** The record's owner; null for the demo. */
  userId: number | null;
  plan: Readonly<Plan>;
  /** Takes one unit (the monthly quota, the demo's daily allowance) or throws the refusal. */
  reserve(): Promise<Allowance>;
  /** Ends the capture, with its reason as the answer (an API key revoked mid-render). */
  signal?: AbortSignal;
  /** Run before every answer, cache hits and joined renders too; throws to refuse it. */
  confirm?(): Promise<void>;
}

export interface CaptureOutcome {
  record: ScreenshotRecord;
  cached: boolean;
  quota: { used: number; limit: number };
  /** Milliseconds the browser spent; null when this request did not render. */
  renderMs: number | null;
}

/**
 * The capture pipeline after authentication and the request rate: validate (URL shape and
 * the plan's option rules, 400, costing nothing), reserve one unit of the caller's
 * allowance (402 / 429), the result cache, the address check (DNS only on a miss), one
 * render per cache key, storage, the record. Any failure after the reservation gives the
 * unit back.
 */
export async function runCapture(
  ctx: CaptureContext,
  options: { caller: CaptureCaller; input: CaptureInput },
): Promise<CaptureOutcome> {
  const { caller, input } = options;
  const url = ctx.guard.parse(input.url);
  const { render, fresh } = resolveCaptureOptions(input, url, caller.plan);
  ctx.guard.screen(url);

  const allowance = await caller.reserve();
  try {
    const outcome = await cachedOrRendered(ctx, { caller, url, render, fresh });
    caller.signal?.throwIfAborted();
    await caller.confirm?.();
    await allowance.commit();
    return { ...outcome, quota: allowance.quota };
  } catch (err) {
    await allowance.release();
    throw caller.signal?.aborted ? caller.signal.reason : err;
  }
}

async function cachedOrRendered(
  ctx: CaptureContext,
  options: { caller: CaptureCaller; url: URL; render: RenderOptions; fresh: boolean },
): Promise<Omit<CaptureOutcome, 'quota'>> {
  const { caller, render, fresh } = options;
  const cacheKey = cacheKeyFor(caller.cacheOwner, render);
  if (!fresh) {
    const now = ctx.clock();
    const hit = await ctx.store.screenshots.findCached(
      cacheKey,
      now - CAPTURE_LIMITS.cacheTtlMs,
      now,
    );
    if (hit) return { record: hit, cached: true, renderMs: null };
  }
  // DNS only now: a cache hit needs none, and a refusal here still returns the unit.
  await ctx.guard.check(options.url, caller.client);
  return renderOnce(ctx, {
    cacheKey,
    fresh,
    signal: caller.signal,
    render: (signal) =>
      renderAndStore(ctx, {
        userId: caller.userId,
        client: { id: caller.client, maxConcurrent: caller.plan.concurrent_renders },
        plan: caller.plan,
        render,
        cacheKey,
        signal,
      }),
  });
}
