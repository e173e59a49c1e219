import { AppError } from '../errors.ts';
import type { User } from '../store.ts';
import type { BillingContext } from './ports.ts';
import { isLive } from './subscription-state.ts';

/**
 * Starts the Pro checkout with the payment provider and returns its URL. Nothing changes
 * here: the plan changes only when the provider's events say the payment went through.
 */
export async function startCheckout(
  ctx: BillingContext,
  options: { user: User },
): Promise<{ url: string }> {
  const { user } = options;
  const account = await ctx.store.billing.find(user.id);
  if (account && isLive(account.status)) {
    throw new AppError('conflict', 'already subscribed to Pro; manage it in the billing portal');
  }
  const customerId =
    account?.provider === ctx.billing.name
      ? account.customerId
      : await ctx.store.billing.saveCustomer({
          userId: user.id,
          provider: ctx.billing.name,
          customerId: await ctx.billing.createCustomer({ accountId: user.id, email: user.email }),
          now: ctx.clock(),
        });
  const url = await ctx.billing.createCheckout({
    accountId: user.id,
    customerId,
    successUrl: ctx.returnUrls.success,
    cancelUrl: ctx.returnUrls.cancel,
  });
  return { url };
}
