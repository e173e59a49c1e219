import { monthBounds } from '../../lib/time.ts';
import type { DomainContext } from '../context.ts';
import type { User } from '../store.ts';

export interface Usage {
  plan: string;
  used: number;
  limit: number;
  remaining: number;
  periodStart: number;
  resetsAt: number;
}

/** The account's consumption of its monthly quota in the current calendar month (UTC). */
export async function getUsage(ctx: DomainContext, options: { user: User }): Promise<Usage> {
  const plan = ctx.plans[options.user.plan];
  const limit = plan.monthly_quota ?? 0;
  const { start, end, key } = monthBounds(ctx.clock());
  const used = await ctx.store.quota.used(options.user.id, key);
  return {
    plan: plan.name,
    used,
    limit,
    remaining: Math.max(0, limit - used),
    periodStart: start,
    resetsAt: end,
  };
}
