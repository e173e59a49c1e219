import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../errors.ts';
import type { ScreenshotRecord } from '../store.ts';
import type { CaptureContext, FlightResult, Unpaid } from './ports.ts';

/** How often a node waiting on another node's render looks for its record. */
const WAIT_POLL_MS = 100;
/** A render lock outlives the render's own deadline by this much (storage and record write). */
const LOCK_SLACK_MS = 5_000;

export interface RenderOnceOutcome {
  record: ScreenshotRecord;
  /** True when this request did not render: it joined a render in flight here or elsewhere. */
  cached: boolean;
  renderMs: number | null;
  /** The image's bytes, when this node rendered them (this request or one it joined). */
  image: Buffer | null;
}

/** A render of this node's, with its image. */
type OwnRender = ScreenshotRecord & { renderMs: number; image: Buffer };

/**
 * Renders a cache key's image once, however many identical requests arrive together on
 * however many nodes (docs/api.md, "The result cache": the request that rendered answers
 * `cached: false`, the ones that waited `cached: true`).
 *
 * On one node, an in-process SingleFlight joins them. Across nodes, the node's leader takes
 * the key's render lock; a node that finds it taken waits for the holder's record to appear
 * in the shared screenshots table and serves it as a hit, or renders itself if the holder
 * lets go without one (its render failed, or it died and the lock expired). `fresh`
 * renders always run.
 */
export async function renderOnce(
  ctx: CaptureContext,
  options: {
    cacheKey: string;
    fresh: boolean;
    /** The request's cache_ttl: how old a record another node rendered may be. */
    cacheTtlMs: number;
    signal: AbortSignal | undefined;
    render: (signal: AbortSignal) => Promise<OwnRender | Unpaid>;
  },
): Promise<RenderOnceOutcome | Unpaid> {
  // A fresh render never joins a flight that started before it was asked for.
  const flightKey = options.fresh ? `${options.cacheKey}:fresh:${ctx.clock()}` : options.cacheKey;
  const { value, leader } = await ctx.flights.run(flightKey, options.signal, (signal) =>
    options.fresh
      ? options.render(signal)
      : acrossNodes(ctx, options.cacheKey, options.cacheTtlMs, signal, options.render),
  );
  if ('unpaid' in value) return value;
  const { image, renderMs, ...record } = value;
  return {
    record,
    cached: !leader || renderMs === null,
    renderMs: leader ? renderMs : null,
    image,
  };
}

async function acrossNodes(
  ctx: CaptureContext,
  cacheKey: string,
  cacheTtlMs: number,
  signal: AbortSignal,
  render: (signal: AbortSignal) => Promise<OwnRender | Unpaid>,
): Promise<FlightResult> {
  const waitUntil = performance.now() + ctx.renderTimeoutMs;
  // A record rendered while this request waited is new enough for any cache_ttl, 0 included.
  const startedAt = ctx.clock();
  const finished = async (): Promise<FlightResult | null> => {
    const now = ctx.clock();
    const hit = await ctx.store.screenshots.findCached({
      cacheKey,
      since: Math.min(now - cacheTtlMs, startedAt),
      now,
    });
    return hit ? { ...hit, renderMs: null, image: null } : null;
  };
  for (;;) {
    let lease: Awaited<ReturnType<CaptureContext['renderLocks']['acquire']>>;
    try {
      lease = await ctx.renderLocks.acquire(cacheKey, ctx.renderTimeoutMs + LOCK_SLACK_MS);
    } catch {
      // The lock store cannot answer (the limits in front of us would have refused if it
      // had been down for long): render here; the worst case is one duplicate render.
      return render(signal);
    }
    if (lease) {
      try {
        // The previous holder may have finished between our cache miss and now.
        return (await finished()) ?? (await render(signal));
      } finally {
        await lease.release().catch(() => {});
      }
    }
    // Another node renders it: wait for its record, as long as a render of our own could take.
    for (;;) {
      await sleep(WAIT_POLL_MS, undefined, { signal });
      const done = await finished();
      if (done) return done;
      const held = await ctx.renderLocks.held(cacheKey).catch(() => false);
      if (!held) {
        // Released: the record is written before the release, so look once more.
        const late = await finished();
        if (late) return late;
        break;
      }
      if (performance.now() >= waitUntil) {
        // The holder may be a node that died mid-render: its lock outlives it by up to a
        // render deadline, so a later attempt (an async job's) may well succeed.
        throw new AppError(
          'render_timeout',
          'the same capture on another node did not finish in time',
          { retryable: true },
        );
      }
    }
  }
}
