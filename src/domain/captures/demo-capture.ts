import { dayBounds } from '../../lib/time.ts';
import { clientIpKey } from '../client-ip.ts';
import { AppError } from '../errors.ts';
import type { WindowCounter } from '../limits.ts';
import type { ScreenshotRecord } from '../store.ts';
import type { CaptureContext } from './ports.ts';
import { type Allowance, perRequest, runCapture } from './run-capture.ts';

/**
 * POST /demo/screenshot: the capture pipeline for an anonymous caller on the demo plan (URL
 * only, fixed PNG 1280x720 kept 24 hours), whose allowance is a daily count per client
 * that counts like the quota (a refused or failed request gives its unit back).
 */
export async function demoCapture(
  ctx: CaptureContext & { demoCounter: WindowCounter },
  options: { url: string; ip: string },
): Promise<{ record: ScreenshotRecord; cached: boolean }> {
  const plan = ctx.plans.demo;
  const clientKey = clientIpKey(options.ip);
  const client = `demo:${clientKey}`;
  const { record, cached } = await runCapture(ctx, {
    // URL only: the rest is the demo plan's fixed image.
    input: {
      url: options.url,
      width: plan.max_width,
      height: plan.max_height,
      format: 'png',
    },
    caller: {
      client,
      cacheOwner: client,
      userId: null,
      plan,
      reserve: () => reserveDaily(ctx, clientKey),
      charge: perRequest,
    },
  });
  return { record, cached };
}

async function reserveDaily(
  ctx: CaptureContext & { demoCounter: WindowCounter },
  client: string,
): Promise<Allowance> {
  const now = ctx.clock();
  const day = dayBounds(now);
  const counterKey = `${client}|${day.key}`;
  const taken = await ctx.demoCounter.take(counterKey, day.end - now);
  const limit = ctx.demoCounter.limit;
  if (!taken.allowed) {
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
  return {
    quota: { used: taken.used, limit },
    release: () => ctx.demoCounter.refund(counterKey),
  };
}
