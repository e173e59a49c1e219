import { BOUNDS } from '../bounds.ts';
import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { ScreenshotRecord } from '../store.ts';
import type { CaptureInput } from './capture-options.ts';
import type { CaptureContext } from './ports.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';
import type { RenderOptions } from './renderer.ts';
import type { Resolution } from './request-resolutions.ts';

/**
 * One unit of a caller's allowance, taken (and counted) once the cache lookup has answered,
 * before anything renders, and kept when the answer goes out.
 */
export interface Allowance {
  /** What the answer reports (the API's `quota`). */
  quota: { used: number; limit: number };
  /** Anything after the reservation failed: the unit is given back. */
  release(): Promise<void>;
  /**
   * The capture delivered, right before its answer goes out: a held unit is kept for good
   * (until then, a node that dies leaves it to come back by itself).
   */
  keep?(): Promise<void>;
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
  /**
   * Takes one unit (the monthly quota, the demo's daily allowance) or throws the refusal.
   * `hold`: a render follows, so the unit is held until `keep` (quota-holds.ts).
   */
  reserve(options?: { hold?: boolean }): Promise<Allowance>;
  /** Ends the capture, with its reason as the answer (an API key revoked mid-render). */
  signal?: AbortSignal;
  /**
   * When the unit is taken. `request` (the default): before the cache lookup, so every
   * answer costs one, a cache hit included (POST /v1/screenshots, the demo, async jobs).
   * `render`: only by the request whose render runs, right before it; a cache hit, or a
   * request that joins another's render, costs nothing (signed links, which strangers
   * replay: docs/plans-and-limits.md, "Plans").
   */
  charge?: 'request' | 'render';
  /**
   * Queued work (an async job, a monitor run): its render waits for a quiet moment among the
   * node's synchronous ones (lib/foreground.ts), whose callers are waiting. Default false.
   */
  background?: boolean;
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

/** The outcome for a caller charged per render: no quota to report when it took no unit. */
export type RenderChargedOutcome = Omit<CaptureOutcome, 'quota'> & {
  quota: CaptureOutcome['quota'] | null;
};

/**
 * The capture pipeline after authentication and the request rate: validate (URL shape and
 * the plan's option rules, 400, costing nothing), reserve one unit of the caller's
 * allowance (402 / 429), the result cache, the address check (DNS only on a miss), one
 * render per cache key, storage, the record. Any failure after the reservation gives the
 * unit back.
 */
export function runCapture(
  ctx: CaptureContext,
  options: { caller: CaptureCaller & { charge: 'render' }; input: CaptureInput },
): Promise<RenderChargedOutcome>;
export function runCapture(
  ctx: CaptureContext,
  options: { caller: CaptureCaller & { charge?: 'request' }; input: CaptureInput },
): Promise<CaptureOutcome>;
export async function runCapture(
  ctx: CaptureContext,
  options: { caller: CaptureCaller; input: CaptureInput },
): Promise<CaptureOutcome | RenderChargedOutcome> {
  const { caller, input } = options;
  const resolution = ctx.resolutions.resolve(input, caller);
  if (caller.charge === 'render') return chargingRenders(ctx, caller, resolution);
  const { url, render, fresh, cacheTtlMs, cacheKey } = resolution;
  // The cache lookup comes first: a miss's unit is held in the reservation's own write (a
  // node that dies mid-render does not keep it), a hit's needs no hold and costs that one
  // write alone. On SQLite the lookup answers synchronously, so nothing waits; on
  // PostgreSQL a hit waits one round trip more. The reservation's answer still comes
  // first, a refusal (402) before anything the lookup found (a key revoked: 401).
  const lookup = await lookUpCache(ctx, { caller, cacheKey, fresh, cacheTtlMs }).then(
    (hit) => ({ hit, failed: false, error: undefined as unknown }),
    (error: unknown) => ({ hit: null, failed: true, error }),
  );
  const allowance = await caller.reserve({ hold: lookup.hit === null && !lookup.failed });
  try {
    if (lookup.failed) throw lookup.error;
    const { keyChecked, ...outcome } =
      lookup.hit ?? (await rendered(ctx, { caller, url, render, cacheKey, fresh, cacheTtlMs }));
    caller.signal?.throwIfAborted();
    if (caller.keyId !== undefined && !keyChecked) await assertKeyActive(ctx, caller.keyId);
    await allowance.keep?.();
    return { ...outcome, quota: allowance.quota };
  } catch (err) {
    await allowance.release();
    throw caller.signal?.aborted ? caller.signal.reason : err;
  }
}

/**
 * A capture charged per render: the cache first (a hit takes no unit), and on a miss one
 * unit taken by the request whose render runs, right before the browser (402 when the quota
 * is spent, nothing rendered); requests that join that render, here or on another node, take
 * none. The unit goes back when the render fails, or when the answer that rendered fails
 * after it (a key revoked meanwhile), like any capture's.
 */
async function chargingRenders(
  ctx: CaptureContext,
  caller: CaptureCaller,
  resolution: Resolution,
): Promise<RenderChargedOutcome> {
  const { url, render, fresh, cacheTtlMs, cacheKey } = resolution;
  const hit = await lookUpCache(ctx, { caller, cacheKey, fresh, cacheTtlMs });
  let held: Allowance | null = null;
  // Set once this request has answered: a render it led that finishes later (its request
  // ended first, others still waiting on it) gives its unit back at once, never held on.
  let answered = false;
  try {
    const { keyChecked, ...outcome } =
      hit ??
      (await rendered(ctx, {
        caller,
        url,
        render,
        cacheKey,
        fresh,
        cacheTtlMs,
        // Runs only in the request that renders (the flight's leader, holding the render
        // lock): the unit is taken before the browser is, and given back if the render
        // fails. Kept once the image is stored: that is what the unit pays for.
        charge: async <T>(work: () => Promise<T>): Promise<T> => {
          const allowance = await caller.reserve({ hold: true }).catch((err: unknown) => {
            throw refusedForLink(err);
          });
          try {
            const value = await work();
            if (answered) await allowance.release();
            else held = allowance;
            return value;
          } catch (err) {
            await allowance.release();
            throw err;
          }
        },
      }));
    caller.signal?.throwIfAborted();
    if (caller.keyId !== undefined && !keyChecked) await assertKeyActive(ctx, caller.keyId);
    // Read after the awaits above: the reservation sets it inside the render.
    const taken = held as Allowance | null;
    answered = true;
    await taken?.keep?.();
    return { ...outcome, quota: taken?.quota ?? null };
  } catch (err) {
    answered = true;
    const taken = held as Allowance | null;
    if (taken !== null) await taken.release();
    throw caller.signal?.aborted ? caller.signal.reason : err;
  }
}

/**
 * A link's own refusal (its account's quota is spent), raised inside a render other
 * requests may have joined: marked, so a joiner that has already paid its unit (an API
 * capture) renders for itself instead of failing with the link's 402 (`rendered`).
 */
const LINK_REFUSAL = Symbol('refused for a link');

function refusedForLink(err: unknown): unknown {
  if (err instanceof AppError) Object.defineProperty(err, LINK_REFUSAL, { value: true });
  return err;
}

const isLinkRefusal = (err: unknown): boolean =>
  err instanceof AppError && (err as unknown as Record<symbol, unknown>)[LINK_REFUSAL] === true;

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

/**
 * Queued work's turn to render (lib/foreground.ts): once no synchronous render has run on this
 * node for BOUNDS.jobs.foregroundQuietMs, or after BOUNDS.jobs.foregroundMaxWaitMs.
 */
export function foregroundTurn(
  ctx: Pick<CaptureContext, 'foreground'>,
  signal?: AbortSignal,
): Promise<void> {
  return ctx.foreground.quiet({
    quietMs: BOUNDS.jobs.foregroundQuietMs,
    maxWaitMs: BOUNDS.jobs.foregroundMaxWaitMs,
    ...(signal ? { signal } : {}),
  });
}

/** A render of this request, ours or a joined one (render-once.ts). */
async function rendered(
  ctx: CaptureContext,
  options: {
    caller: CaptureCaller;
    url: URL | null;
    render: RenderOptions;
    cacheKey: string;
    fresh: boolean;
    cacheTtlMs: number;
    /** Wraps the render itself, when it runs in this request (a charge per render). */
    charge?: <T>(work: () => Promise<T>) => Promise<T>;
  },
): Promise<Found> {
  const { caller } = options;
  if (caller.background) {
    await foregroundTurn(ctx, caller.signal);
    return renderedNow(ctx, options);
  }
  const leave = ctx.foreground.enter();
  try {
    return await renderedNow(ctx, options);
  } finally {
    leave();
  }
}

async function renderedNow(
  ctx: CaptureContext,
  options: Parameters<typeof rendered>[1],
): Promise<Found> {
  const { caller, render, cacheKey, fresh, cacheTtlMs } = options;
  const charge = options.charge ?? ((work) => work());
  // DNS only now: a cache hit needs none, and a refusal here still returns the unit.
  if (options.url !== null) await ctx.guard.check(options.url, caller.client);
  const once = () =>
    renderOnce(ctx, {
      cacheKey,
      fresh,
      cacheTtlMs,
      signal: caller.signal,
      render: (signal) =>
        charge(() =>
          renderAndStore(ctx, {
            userId: caller.userId,
            client: { id: caller.client, maxConcurrent: caller.plan.concurrent_renders },
            plan: caller.plan,
            render,
            cacheKey,
            signal,
          }),
        ),
    });
  let result: Awaited<ReturnType<typeof once>>;
  try {
    result = await once();
  } catch (err) {
    // The link that led this render had no unit left; this request paid its own (or is a
    // link itself, and then the same refusal is its answer): its own render, once.
    if (options.charge !== undefined || !isLinkRefusal(err)) throw err;
    result = await once();
  }
  return { ...result, keyChecked: false };
}
