import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { ScreenshotRecord } from '../store.ts';
import type { CaptureInput } from './capture-options.ts';
import type { CaptureContext } from './ports.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';
import type { RenderOptions } from './renderer.ts';

/**
 * One unit of a caller's allowance, taken (and counted) before the cache lookup and kept
 * when the answer goes out.
 */
export interface Allowance {
  /** What the answer reports (the API's `quota`). */
  quota: { used: number; limit: number };
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
  /**
   * The API key asking, if any: it must still be active when the answer goes out
   * (docs/security.md, "Revocation"), or the answer is 401 and the unit goes back. A cache
   * lookup reads it in the lookup's own statement; after a render, ours or a joined one, it
   * is read once more.
   */
  keyId?: number;
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
  const { url, render, fresh, cacheTtlMs, cacheKey } = ctx.resolutions.resolve(input, caller);
  // The cache lookup does not wait for the reservation (neither reads what the other
  // writes): a hit costs one database round trip less in time. The reservation's answer
  // still comes first, a refusal (402) before anything the lookup found, and nothing
  // renders until both are in.
  const lookup = lookUpCache(ctx, { caller, cacheKey, fresh, cacheTtlMs });
  lookup.catch(() => {});
  const allowance = await caller.reserve();
  try {
    const hit = await lookup;
    const { keyChecked, ...outcome } =
      hit ?? (await rendered(ctx, { caller, url, render, cacheKey, fresh, cacheTtlMs }));
    caller.signal?.throwIfAborted();
    if (caller.keyId !== undefined && !keyChecked) await assertKeyActive(ctx, caller.keyId);
    return { ...outcome, quota: allowance.quota };
  } catch (err) {
    await allowance.release();
    throw caller.signal?.aborted ? caller.signal.reason : err;
  }
}

const revoked = () => new AppError('unauthorized', 'unauthorized');

async function assertKeyActive(ctx: CaptureContext, keyId: number): Promise<void> {
  if (!(await ctx.store.keys.isActive(keyId))) throw revoked();
}

type Found = Omit<CaptureOutcome, 'quota'> & {
  /** The key was read after the record was found. */
  keyChecked: boolean;
};

/**
 * The cache record, if one is fresh enough for this request; null when none is, or when the
 * request accepts none.
 */
async function lookUpCache(
  ctx: CaptureContext,
  options: { caller: CaptureCaller; cacheKey: string; fresh: boolean; cacheTtlMs: number },
): Promise<Found | null> {
  const { caller, cacheKey, fresh, cacheTtlMs } = options;
  // cache_ttl 0 accepts no cached result: no lookup (the render is stored as any other).
  if (fresh || cacheTtlMs <= 0) return null;
  const now = ctx.clock();
  const since = now - cacheTtlMs;
  if (caller.keyId === undefined) {
    const hit = await ctx.store.screenshots.findCached(cacheKey, since, now);
    return hit ? { record: hit, cached: true, renderMs: null, keyChecked: false } : null;
  }
  // One statement reads the record and the key: a revocation that landed since
  // authentication refuses the hit here (and a miss before any browser time).
  const found = await ctx.store.screenshots.findCachedForKey(cacheKey, since, now, caller.keyId);
  if (!found.keyActive) throw revoked();
  return found.record
    ? { record: found.record, cached: true, renderMs: null, keyChecked: true }
    : null;
}

/** A render of this request, ours or a joined one (render-once.ts). */
async function rendered(
  ctx: CaptureContext,
  options: {
    caller: CaptureCaller;
    url: URL;
    render: RenderOptions;
    cacheKey: string;
    fresh: boolean;
    cacheTtlMs: number;
  },
): Promise<Found> {
  const { caller, render, cacheKey, fresh, cacheTtlMs } = options;
  // DNS only now: a cache hit needs none, and a refusal here still returns the unit.
  await ctx.guard.check(options.url, caller.client);
  const result = await renderOnce(ctx, {
    cacheKey,
    fresh,
    cacheTtlMs,
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
  return { ...result, keyChecked: false };
}
