import type { PlanName } from '../plans.ts';
import type { User } from '../store.ts';
import type { BillingContext } from './ports.ts';
import type { SubscriptionStatus } from './subscription-state.ts';

export interface SubscriptionView {
  /** The plan in force: the users row, which every request reads. */
  plan: PlanName;
  status: SubscriptionStatus;
  renewsAt: number | null;
  cancelAtPeriodEnd: boolean;
}

/** The account's plan and its subscription as the provider last reported it. */
export async function getSubscription(
  ctx: BillingContext,
  options: { user: User },
): Promise<SubscriptionView> {
  const account = await ctx.store.billing.find(options.user.id);
  const status = account?.status ?? 'none';
  return {
    plan: options.user.plan,
    status,
    renewsAt: status === 'none' || status === 'canceled' ? null : (account?.renewsAt ?? null),
    cancelAtPeriodEnd: account?.cancelAtPeriodEnd ?? false,
  };
}
