import { AppError } from '../errors.ts';
import type { User } from '../store.ts';
import type { BillingContext } from './ports.ts';

/** The provider's page to manage or cancel the subscription. */
export async function openPortal(
  ctx: BillingContext,
  options: { user: User },
): Promise<{ url: string }> {
  const account = await ctx.store.billing.find(options.user.id);
  if (!account || account.provider !== ctx.billing.name) {
    throw new AppError('conflict', 'no subscription to manage yet; start a checkout first');
  }
  const url = await ctx.billing.createPortal({
    accountId: options.user.id,
    customerId: account.customerId,
    returnUrl: ctx.returnUrls.portal,
  });
  return { url };
}
