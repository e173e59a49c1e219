import { clientIpKey } from '../client-ip.ts';
import { AppError } from '../errors.ts';
import type { WindowCounter } from '../limits.ts';

/**
 * The demo's hourly request budget per client (IPv6 by /64), beside the daily allowance of
 * successful captures: every request counts, refused and failed ones too, so one client cannot
 * keep the service busy with requests that never use up the allowance. Its window starts with
 * the client's first request. Over it: the 429 body (docs/errors.md) with `plan: "demo"`.
 */
export async function countDemoRequest(
  ctx: { clock: () => number; demoRequests: WindowCounter },
  options: { ip: string },
): Promise<void> {
  const taken = await ctx.demoRequests.take(`${clientIpKey(options.ip)}|requests`);
  if (taken.allowed) return;
  const limit = ctx.demoRequests.limit;
  const retryMs = Math.max(1, taken.resetAt - ctx.clock());
  throw new AppError('rate_limited', 'rate limit exceeded', {
    body: {
      message: `The demo allows ${limit} requests per hour; sign up for a free API key to capture more.`,
      success: false,
      limit,
      used: limit,
      remaining: 0,
      reset_time: Math.ceil(taken.resetAt / 1000),
      plan: 'demo',
    },
    headers: { 'Retry-After': String(Math.ceil(retryMs / 1000)) },
  });
}
