import { type Static, Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { getUsage } from '../../../domain/quota/get-usage.ts';
import type { User } from '../../../domain/store.ts';
import { toIso } from '../../../lib/time.ts';
import { IsoDateTime } from '../../schemas.ts';
import type { RouteDeps } from '../../types.ts';

export const UserBody = Type.Object(
  {
    user: Type.Object({
      id: Type.Integer(),
      email: Type.String(),
      plan: Type.String({ enum: ['free', 'pro'] }),
      created_at: IsoDateTime,
    }),
  },
  { description: 'The signed-in account.' },
);

export const Credentials = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: BOUNDS.account.emailMax }),
    password: Type.String({ minLength: 1, maxLength: BOUNDS.account.loginPasswordMax }),
  },
  { additionalProperties: false },
);

export const userBody = (user: User): Static<typeof UserBody> => ({
  user: { id: user.id, email: user.email, plan: user.plan, created_at: toIso(user.createdAt) },
});

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

/** The period's quota and the capture rate: GET /v1/usage, and the dashboard's view of them. */
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
