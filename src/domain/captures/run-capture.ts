import { BOUNDS } from '../bounds.ts';
import { type Delivered, deliver, destinationFor } from '../destinations/deliver.ts';
import type { StorageDestination } from '../destinations/store.ts';
import { AppError } from '../errors.ts';
import type { Plan } from '../plans.ts';
import type { ScreenshotRecord } from '../store.ts';
import type { CaptureInput } from './capture-options.ts';
import { storedKeys } from './formats.ts';
import type { StorageRequest } from './options/define.ts';
import type { CaptureContext, Unpaid } from './ports.ts';
import { callerProxyHost } from './proxy-directory.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';
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

/** What an answer reports of the caller's allowance (the API's `quota`). */
export type Quota = { used: number; limit: number };

/** Takes one unit (the monthly quota, the demo's daily allowance) or throws the refusal. */
export type Reserve = (options?: { hold?: boolean }) => Promise<Allowance>;

/**
 * What a capture's unit costs and when it is taken: the caller's choice of strategy,
 * `perRequest` or `perRender` below. `Q` is what the answer reports: a quota, or null when a
 * capture charged per render took no unit.
 */
export interface Charge<Q extends Quota | null> {
  /** Opens the capture's bill once the cache has answered (`miss`: a render follows). */
  open(reserve: Reserve, miss: boolean): Promise<Bill<Q>>;
}

/** One capture's bill: kept when the answer goes out, given back on any failure before. */
export interface Bill<Q extends Quota | null> {
  /**
   * Wraps the render, when the unit is taken only by the request whose render runs: the
   * work's value, or the refusal to pay for it as a value (other requests may have joined
   * that render, and decide for themselves: `renderedNow`).
   */
  readonly aroundRender?: <T>(work: () => Promise<T>) => Promise<T | Unpaid>;
  quota(): Q;
  keep(): Promise<void>;
  release(): Promise<void>;
}

/**
 * A unit for every answer, a cache hit included, taken before anything renders
 * (POST /v1/screenshots, the demo, async jobs). A miss's unit is held in the reservation's own
 * write, so a node that dies mid-render does not keep it; a hit's needs no hold.
 */
export const perRequest: Charge<Quota> = {
  async open(reserve, miss) {
    const allowance = await reserve({ hold: miss });
    return {
      quota: () => allowance.quota,
      keep: async () => {
        await allowance.keep?.();
      },
      release: () => allowance.release(),
    };
  },
};

/**
 * A unit only for the request whose render runs, taken right before the browser (402 when
 * the quota is spent, nothing rendered); a cache hit, or a request that joins a render here or
 * on another node, costs nothing (signed links, which strangers replay: docs/plans-and-limits.md,
 * "Plans"). The unit goes back when the render fails, or when the answer that rendered fails
 * after it (a key revoked meanwhile), like any capture's.
 */
export const perRender: Charge<Quota | null> = {
  async open(reserve) {
    let held: Allowance | null = null;
    // Set once this request has answered: a render it led that finishes later (its request
    // ended first, others still waiting on it) gives its unit back at once, never held on.
    let answered = false;
    return {
      async aroundRender(work) {
        let allowance: Allowance;
        try {
          allowance = await reserve({ hold: true });
        } catch (err) {
          if (err instanceof AppError) return { unpaid: err };
          throw err;
        }
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
      quota: () => held?.quota ?? null,
      async keep() {
        answered = true;
        await held?.keep?.();
      },
      async release() {
        answered = true;
        const taken = held;
        held = null;
        await taken?.release();
      },
    };
  },
};

/**
 * Who asks for a capture. The HTTP layer has authenticated it and applied its request rate;
 * the rest is the same for every caller: the API key, the landing-page demo, signed links,
 * async jobs and monitor runs.
 */
export interface CaptureCaller<Q extends Quota | null = Quota> {
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
  /** Takes one unit; `hold`: a render follows, so it is held until kept (quota-holds.ts). */
  reserve: Reserve;
  /** When the unit is taken: `perRequest` or `perRender`. */
  charge: Charge<Q>;
  /** Ends the capture, with its reason as the answer (an API key revoked mid-render). */
  signal?: AbortSignal;
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

export interface CaptureOutcome<Q extends Quota | null = Quota> {
  record: ScreenshotRecord;
  cached: boolean;
  quota: Q;
  /** Milliseconds the browser spent; null when this request did not render. */
  renderMs: number | null;
  /** The image's bytes when this node rendered them for this request; null for a cache hit. */
  image: Buffer | null;
  /** Where the copy went (`storage`); null: nowhere. Without a copy here (`hosted: false`)
   * the record is gone already, and the answer has no image_url. */
  storage?: { delivered: Delivered; hosted: boolean } | null;
}

/** The outcome for a caller charged per render: no quota to report when it took no unit. */
export type RenderChargedOutcome = CaptureOutcome<Quota | null>;

/**
 * The capture pipeline after authentication and the request rate, one sequence for every
 * caller: validate (URL shape and the plan's option rules, 400, costing nothing), the result
 * cache, the caller's bill (a unit taken now, or by the render: `caller.charge`), the address
 * check (DNS only on a miss), one render per cache key, storage, the record, the key checked
 * once more. Any failure after the bill is opened gives its unit back.
 *
 * The cache lookup comes first: a miss's unit is held in the reservation's own write, a hit's
 * needs no hold. On SQLite the lookup answers synchronously; on PostgreSQL a hit waits one
 * round trip more. The bill's answer still comes first, a refusal (402) before anything the
 * lookup found (a key revoked: 401).
 */
export async function runCapture<Q extends Quota | null>(
  ctx: CaptureContext,
  options: { caller: CaptureCaller<Q>; input: CaptureInput },
): Promise<CaptureOutcome<Q>> {
  const { caller, input } = options;
  const resolution = ctx.resolutions.resolve(input, caller);
  // An unknown destination is a 400 before the bill, as any invalid option.
  const destination = resolution.storage
    ? await destinationFor(ctx, caller.userId, resolution.storage)
    : null;
  const lookup = await lookUpCache(ctx, caller, resolution).then(
    (hit) => ({ hit, error: null as { cause: unknown } | null }),
    (cause: unknown) => ({ hit: null, error: { cause } }),
  );
  const bill = await caller.charge.open(caller.reserve, lookup.hit === null && !lookup.error);
  try {
    if (lookup.error) throw lookup.error.cause;
    const { keyChecked, ...outcome } =
      lookup.hit ?? (await rendered(ctx, caller, resolution, bill));
    caller.signal?.throwIfAborted();
    if (caller.keyId !== undefined && !keyChecked) await assertKeyActive(ctx, caller.keyId);
    const storage =
      destination && resolution.storage
        ? await copied(ctx, { destination, request: resolution.storage, outcome })
        : null;
    await bill.keep();
    return { ...outcome, quota: bill.quota(), storage };
  } catch (err) {
    await bill.release();
    throw caller.signal?.aborted ? caller.signal.reason : err;
  }
}

/**
 * The capture's copy in the account's bucket. When the upload fails, a record this request
 * rendered is dropped (nothing left hosted for a failed capture); without a copy here
 * (`hosted: false`), it is dropped once the upload succeeded.
 */
async function copied(
  ctx: CaptureContext,
  parts: {
    destination: StorageDestination;
    request: StorageRequest;
    outcome: Omit<CaptureOutcome, 'quota'>;
  },
): Promise<{ delivered: Delivered; hosted: boolean }> {
  const { destination, request, outcome } = parts;
  const drop = async () => {
    const gone = await ctx.store.screenshots.deleteForUser(destination.userId, outcome.record.id);
    if (gone) await Promise.all(storedKeys(gone).map((key) => ctx.storage.delete(key)));
  };
  let delivered: Delivered;
  try {
    delivered = await deliver(ctx, { destination, request, ...outcome });
  } catch (err) {
    if (outcome.renderMs !== null) await drop().catch(() => {});
    throw err;
  }
  if (!request.hosted) await drop();
  return { delivered, hosted: request.hosted };
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
  caller: CaptureCaller<Quota | null>,
  resolution: Resolution,
): Promise<Found | null> {
  const { cacheKey, fresh, cacheTtlMs } = resolution;
  // cache_ttl 0 accepts no cached result: no lookup (the render is stored as any other).
  if (fresh || cacheTtlMs <= 0) return null;
  const now = ctx.clock();
  const since = now - cacheTtlMs;
  const hit = (record: ScreenshotRecord, keyChecked: boolean): Found => ({
    record,
    cached: true,
    renderMs: null,
    image: null,
    keyChecked,
  });
  if (caller.keyId === undefined) {
    const record = await ctx.store.screenshots.findCached({ cacheKey, since, now });
    return record ? hit(record, false) : null;
  }
  // One statement reads the record and the key: a revocation that landed since
  // authentication refuses the hit here (and a miss before any browser time).
  const found = await ctx.store.screenshots.findCachedForKey({
    cacheKey,
    since,
    now,
    keyId: caller.keyId,
  });
  if (!found.keyActive) throw revoked();
  return found.record ? hit(found.record, true) : null;
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

/** A render of this request, ours or a joined one, in its turn (foreground or queued). */
async function rendered(
  ctx: CaptureContext,
  caller: CaptureCaller<Quota | null>,
  resolution: Resolution,
  bill: Bill<Quota | null>,
): Promise<Found> {
  if (caller.background) {
    await foregroundTurn(ctx, caller.signal);
    return renderedNow(ctx, caller, resolution, bill);
  }
  const leave = ctx.foreground.enter();
  try {
    return await renderedNow(ctx, caller, resolution, bill);
  } finally {
    leave();
  }
}

async function renderedNow(
  ctx: CaptureContext,
  caller: CaptureCaller<Quota | null>,
  resolution: Resolution,
  bill: Bill<Quota | null>,
): Promise<Found> {
  const { url, render, cacheKey, fresh, cacheTtlMs } = resolution;
  // DNS only now: a cache hit needs none, and a refusal here still returns the unit.
  // Through a proxy that resolves names itself, the name goes to it unresolved (docs/proxies.md).
  if (url !== null && !ctx.proxies.resolvesNames(render.proxy)) {
    await ctx.guard.check(url, caller.client);
  }
  const proxyHost = callerProxyHost(render.proxy);
  if (proxyHost !== null) await ctx.guard.checkProxy(proxyHost.host, proxyHost.port, caller.client);
  const store = (signal: AbortSignal) =>
    renderAndStore(ctx, {
      userId: caller.userId,
      client: { id: caller.client, maxConcurrent: caller.plan.concurrent_renders },
      plan: caller.plan,
      render,
      cacheKey,
      signal,
    });
  const pay = bill.aroundRender;
  const once = () =>
    renderOnce(ctx, {
      cacheKey,
      fresh,
      cacheTtlMs,
      signal: caller.signal,
      render: pay ? (signal) => pay(() => store(signal)) : store,
    });
  let result = await once();
  // The render was led by a request that could not pay for it (a signed link whose account
  // has no unit left). A request that pays per render has the same answer; one that paid
  // already renders for itself, once.
  if ('unpaid' in result && pay === undefined) result = await once();
  if ('unpaid' in result) throw result.unpaid;
  return { ...result, keyChecked: false };
}
