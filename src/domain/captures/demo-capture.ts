import { isIPv6 } from 'node:net';
import { dayBounds } from '../../lib/time.ts';
import { AppError } from '../errors.ts';
import type { WindowCounter } from '../limits.ts';
import type { ScreenshotRecord } from '../store.ts';
import { cacheKeyFor, resolveCaptureOptions } from './capture-options.ts';
import { CAPTURE_LIMITS, type CaptureContext } from './ports.ts';
import { renderAndStore } from './render-and-store.ts';
import { renderOnce } from './render-once.ts';

/**
 * The client a demo allowance belongs to: the IPv4 address, or the /64 of an IPv6 one (a
 * single subscriber usually holds a whole /64, so per-address counting would be no limit).
 */
export function demoClientKey(ip: string): string {
  const bare = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
  if (!isIPv6(bare)) return bare;
  const [head = '', tail = ''] = bare.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const groups = bare.includes('::')
    ? [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts]
    : headParts;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}

/**
 * POST /demo/screenshot: URL only, fixed PNG 1280x720 kept 24 hours, a daily allowance
 * per client that counts like the quota (a refused or failed request gives its unit back).
 */
export async function demoCapture(
  ctx: CaptureContext & { demoCounter: WindowCounter },
  options: { url: unknown; ip: string },
): Promise<{ record: ScreenshotRecord; cached: boolean }> {
  const plan = ctx.plans.demo;
  const url = ctx.guard.parse(options.url);
  const render = resolveCaptureOptions(
    { url: url.href, width: plan.max_width, height: plan.max_height, format: 'png' },
    url,
    plan,
  );
  ctx.guard.screen(url);

  const client = demoClientKey(options.ip);
  const now = ctx.clock();
  const day = dayBounds(now);
  const counterKey = `${client}|${day.key}`;
  const taken = await ctx.demoCounter.take(counterKey, day.end - now);
  if (!taken.allowed) {
    const limit = ctx.demoCounter.limit;
    const resetSeconds = Math.ceil(day.end / 1000);
    throw new AppError('rate_limited', 'rate limit exceeded', {
      body: {
        message: `The demo allows ${limit} screenshots per day; sign up for a free API key to capture more.`,
        success: false,
        limit,
        used: limit,
        remaining: 0,
        reset_time: resetSeconds,
        plan: 'demo',
      },
      headers: { 'Retry-After': String(Math.max(1, Math.ceil((day.end - now) / 1000))) },
    });
  }
  try {
    const cacheKey = cacheKeyFor(`demo:${client}`, render);
    const hit = await ctx.store.screenshots.findCached(
      cacheKey,
      now - CAPTURE_LIMITS.cacheTtlMs,
      now,
    );
    if (hit) return { record: hit, cached: true };
    await ctx.guard.check(url, `demo:${client}`);
    const { record, cached } = await renderOnce(ctx, {
      cacheKey,
      fresh: false,
      signal: undefined,
      render: (signal) =>
        renderAndStore(ctx, {
          userId: null,
          client: { id: `demo:${client}`, maxConcurrent: plan.concurrent_renders },
          plan,
          render,
          cacheKey,
          signal,
        }),
    });
    return { record, cached };
  } catch (err) {
    await ctx.demoCounter.refund(counterKey);
    throw err;
  }
}
