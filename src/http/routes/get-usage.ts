import { type Static, Type } from 'typebox';
import { getUsage } from '../../domain/quota/get-usage.ts';
import { toIso } from '../../lib/time.ts';
import { requireApiKey } from '../auth.ts';
import { errorResponses, IsoDateTime } from '../schemas.ts';
import type { App, RouteDeps } from '../types.ts';

export const UsageBody = Type.Object({
  plan: Type.String(),
  used: Type.Integer(),
  limit: Type.Integer(),
  remaining: Type.Integer(),
  period_start: IsoDateTime,
  resets_at: IsoDateTime,
  rate_limit: Type.Object({
    limit: Type.Union([Type.Integer(), Type.Null()]),
    remaining: Type.Union([Type.Integer(), Type.Null()]),
    reset_time: Type.Union([Type.Integer(), Type.Null()]),
  }),
});

export function registerGetUsage(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/usage',
    {
      schema: {
        tags: ['usage'],
        summary: 'Current-period quota consumption and the per-minute capture rate',
        security: [{ apiKey: [] }],
        response: { 200: UsageBody, ...errorResponses(401, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      return usageBody(deps, user);
    },
  );
}

export async function usageBody(
  deps: RouteDeps,
  user: Parameters<typeof getUsage>[1]['user'],
): Promise<Static<typeof UsageBody>> {
  const usage = await getUsage(deps.ctx, { user });
  const counter = deps.rateLimits.captureCounter(user.plan);
  const rate = counter ? await counter.peek(String(user.id)) : null;
  return {
    plan: usage.plan,
    used: usage.used,
    limit: usage.limit,
    remaining: usage.remaining,
    period_start: toIso(usage.periodStart),
    resets_at: toIso(usage.resetsAt),
    rate_limit: {
      limit: counter?.limit ?? null,
      remaining: counter && rate ? Math.max(0, counter.limit - rate.used) : null,
      reset_time: rate ? Math.ceil(rate.resetAt / 1000) : null,
    },
  };
}
