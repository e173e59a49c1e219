import type { Store } from '../store.ts';
import type { BillingContext } from './ports.ts';
import { type BillingEvent, NO_SUBSCRIPTION, nextState, planFor } from './subscription-state.ts';

/**
 * applied: the state (and plan) changed; ignored: recorded, but older than the state or
 * not about the account's subscription; duplicate: this event id was applied before;
 * unknown_account: no account of ours (acknowledged so the provider stops retrying);
 * unhandled: a type billing does not act on.
 */
export type BillingEventOutcome =
  | 'applied'
  | 'ignored'
  | 'duplicate'
  | 'unknown_account'
  | 'unhandled';

/**
 * Folds one verified provider event into the account's subscription and plan. The event id,
 * the new state and the plan are written in one transaction: an event applies exactly once,
 * and a failure leaves nothing behind for the provider's retry to trip over.
 */
export async function applyBillingEvent(
  ctx: BillingContext,
  options: { event: BillingEvent },
): Promise<BillingEventOutcome> {
  const { event } = options;
  if (event.kind === 'unhandled') return 'unhandled';
  const now = ctx.clock();
  return ctx.store.transaction(async (tx) => {
    const userId = await accountOf(tx, event);
    const fresh = await tx.billing.recordEvent({
      id: event.id,
      type: event.type,
      userId,
      receivedAt: now,
    });
    if (!fresh) return 'duplicate';
    if (userId === null) return 'unknown_account';

    const current = await tx.billing.findForUpdate(userId);
    // Another customer's news (one made outside our checkout, or the provider before an
    // operator switched) says nothing about this account's subscription.
    if (current && event.customerId !== null && event.customerId !== current.customerId) {
      return 'ignored';
    }
    const customerId = current?.customerId ?? event.customerId;
    if (customerId === null) return 'unknown_account';
    const next = nextState(current ?? NO_SUBSCRIPTION, event);
    if (next === null) return 'ignored';
    await tx.billing.saveState({
      userId,
      provider: current?.provider ?? ctx.billing.name,
      customerId,
      state: next,
      now,
    });
    // The plan is read from the users row on every request, on every node: this write is
    // what makes the change hold from the very next request. Usage rows are untouched.
    await tx.users.setPlan(userId, planFor(next.status), now);
    return 'applied';
  });
}

/** Our customer record decides; failing that, the account the event names, if it exists. */
async function accountOf(tx: Store, event: BillingEvent): Promise<number | null> {
  if (event.customerId !== null) {
    const byCustomer = await tx.billing.findUserIdByCustomer(event.customerId);
    if (byCustomer !== null) return byCustomer;
  }
  if (event.accountId === null) return null;
  return (await tx.users.findById(event.accountId)) ? event.accountId : null;
}
