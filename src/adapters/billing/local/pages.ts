/**
 * What the checkout and portal pages do (src/http/routes/billing/local-pages.ts serves them):
 * show a checkout, pay or abandon it, show the portal, cancel or resume at period end.
 */
import { AppError } from '../../../domain/errors.ts';
import { randomBase62 } from '../../../lib/crypto.ts';
import type { LocalCheckoutView, LocalContext, LocalPortalView } from './records.ts';
import { addMonths } from './renewals.ts';
import { findCheckout, findPortal, lookupCheckout, lookupPortal } from './sessions.ts';

/** Null when there is no such checkout (or the id is not one). */
export async function viewCheckout(
  ctx: LocalContext,
  id: string,
): Promise<LocalCheckoutView | null> {
  const session = await lookupCheckout(ctx.store, id);
  if (!session) return null;
  const expired =
    session.status === 'expired' || (session.status === 'open' && session.expiresAt <= ctx.clock());
  return {
    status: expired ? 'expired' : session.status,
    priceCents: ctx.priceCents,
    cancelUrl: session.cancelUrl,
  };
}

/** Pays: the subscription starts and its events are delivered. The URL to go to next. */
export async function completeCheckout(ctx: LocalContext, id: string): Promise<string> {
  const { store } = ctx;
  const session = await findCheckout(store, id);
  const now = ctx.clock();
  if (session.status === 'expired' || (session.status === 'open' && session.expiresAt <= now)) {
    throw new AppError('conflict', 'this checkout was abandoned or has expired; start a new one');
  }
  if (session.status === 'open') {
    const result = await store.completeCheckout({
      sessionId: id,
      subscription: {
        id: `sub_local_${randomBase62(24)}`,
        userId: session.userId,
        customerId: session.customerId,
        status: 'active',
        currentPeriodStart: now,
        currentPeriodEnd: addMonths(now, 1),
        cancelAtPeriodEnd: false,
        createdAt: now,
        updatedAt: now,
      },
    });
    if (result === 'already_subscribed') {
      throw new AppError('conflict', 'this account already has an active subscription');
    }
  }
  // Completed now, by a concurrent request, or earlier: (re)deliver its events. Their
  // ids are fixed, so a delivery that already got through is recognised and skipped.
  // Only while the checkout is young: processed event ids are forgotten after a while,
  // and an old payment replayed then must not revive a subscription that has ended.
  const completed = await store.findSession(id);
  if (completed?.status !== 'complete') {
    throw new AppError('conflict', 'this checkout was abandoned; start a new one');
  }
  if (completed.expiresAt <= now) return completed.successUrl;
  const sub = completed.subscriptionId
    ? await store.findSubscription(completed.subscriptionId)
    : null;
  if (!sub) throw new AppError('internal_error', 'completed checkout without its subscription');
  await ctx.events.checkoutCompleted(completed, sub);
  return completed.successUrl;
}

/** Abandons the checkout; the URL to go to next. Changes nothing else. */
export async function abandonCheckout(ctx: LocalContext, id: string): Promise<string> {
  const session = await findCheckout(ctx.store, id);
  if (session.status === 'complete') {
    throw new AppError('conflict', 'this checkout is already paid');
  }
  await ctx.store.expireCheckout(id);
  return session.cancelUrl ?? session.successUrl;
}

/** Null when there is no such portal session or it has expired. */
export async function viewPortal(ctx: LocalContext, id: string): Promise<LocalPortalView | null> {
  const session = await lookupPortal(ctx.store, id, ctx.clock);
  if (!session) return null;
  const sub = await ctx.store.latestSubscription(session.customerId);
  return {
    subscription: sub
      ? {
          status: sub.status,
          currentPeriodEnd: sub.currentPeriodEnd,
          cancelAtPeriodEnd: sub.cancelAtPeriodEnd,
        }
      : null,
    returnUrl: session.successUrl,
  };
}

/** Cancels the active subscription at its period end, or takes that back. */
export async function setCancelAtPeriodEnd(
  ctx: LocalContext,
  portalId: string,
  cancel: boolean,
): Promise<void> {
  const { store } = ctx;
  const session = await findPortal(store, portalId, ctx.clock);
  const latest = await store.latestSubscription(session.customerId);
  const sub =
    latest?.status === 'active'
      ? await store.setCancelAtPeriodEnd(latest.id, cancel, ctx.clock())
      : null;
  if (!sub) throw new AppError('conflict', 'there is no active subscription to change');
  await ctx.events.subscriptionChanged(sub);
}
