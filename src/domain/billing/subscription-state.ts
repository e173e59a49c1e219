import type { PlanName } from '../plans.ts';

/**
 * Subscription state as the payment provider's events describe it, and the rules that fold
 * one more event into it. Pure: the store and the provider live elsewhere.
 */
export const SUBSCRIPTION_STATUSES = [
  'none',
  'active',
  'past_due',
  'canceled',
  'incomplete',
  'unpaid',
] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];

export interface BillingState {
  subscriptionId: string | null;
  status: SubscriptionStatus;
  /** End of the paid period (epoch ms): the renewal date, or the end date when cancelling. */
  renewsAt: number | null;
  cancelAtPeriodEnd: boolean;
  /** Creation time (epoch ms) of the newest event folded in; null before the first. */
  stateAt: number | null;
}

export const NO_SUBSCRIPTION: BillingState = {
  subscriptionId: null,
  status: 'none',
  renewsAt: null,
  cancelAtPeriodEnd: false,
  stateAt: null,
};

interface EventBase {
  /** The provider's event id (deduplication key). */
  id: string;
  /** The provider's event type, for logs. */
  type: string;
  /** When the provider created the event (epoch ms). */
  createdAt: number;
  /** The account named by the event (checkout client reference or metadata), if any. */
  accountId: number | null;
  customerId: string | null;
}

/** A verified provider event, translated into what billing acts on. */
export type BillingEvent = EventBase &
  (
    | { kind: 'checkout_completed'; subscriptionId: string | null; paid: boolean }
    | {
        kind: 'subscription';
        subscriptionId: string;
        status: SubscriptionStatus;
        renewsAt: number | null;
        cancelAtPeriodEnd: boolean;
      }
    | { kind: 'invoice_paid'; subscriptionId: string | null; periodEnd: number | null }
    | { kind: 'invoice_failed'; subscriptionId: string | null }
    | { kind: 'unhandled' }
  );

/** Pro while the subscription is active or past due (the provider is still retrying). */
export const isLive = (status: SubscriptionStatus): boolean =>
  status === 'active' || status === 'past_due';

export const planFor = (status: SubscriptionStatus): PlanName => (isLive(status) ? 'pro' : 'free');

/**
 * Lifecycle order, used only to break a tie between two events created in the same second
 * (providers stamp events in whole seconds): a subscription moves from incomplete to
 * active/past_due/unpaid and ends canceled, so the later stage wins.
 */
const STAGE: Record<SubscriptionStatus, number> = {
  none: -1,
  incomplete: 0,
  active: 1,
  past_due: 1,
  unpaid: 1,
  canceled: 2,
};

/**
 * The state after `event`, or null when the event changes nothing: it is older than the
 * state, it concerns a subscription that is not the account's, or it would bring a canceled
 * subscription back (providers never revive one; buying again makes a new subscription).
 */
export function nextState(current: BillingState, event: BillingEvent): BillingState | null {
  if (current.stateAt !== null && event.createdAt < current.stateAt) return null;
  const proposed = propose(current, event);
  if (proposed === null) return null;

  const sameSubscription =
    current.subscriptionId !== null && proposed.subscriptionId === current.subscriptionId;
  if (sameSubscription) {
    if (current.status === 'canceled' && proposed.status !== 'canceled') return null;
    if (event.createdAt === current.stateAt && STAGE[proposed.status] < STAGE[current.status]) {
      return null;
    }
  } else if (
    current.subscriptionId !== null &&
    isLive(current.status) &&
    !isLive(proposed.status)
  ) {
    // News that another subscription is not live does not end the live one.
    return null;
  }
  return { ...proposed, stateAt: Math.max(current.stateAt ?? 0, event.createdAt) };
}

function propose(current: BillingState, event: BillingEvent): BillingState | null {
  switch (event.kind) {
    case 'subscription': {
      const ended = event.status === 'canceled';
      return {
        subscriptionId: event.subscriptionId,
        status: event.status,
        renewsAt: ended ? null : event.renewsAt,
        cancelAtPeriodEnd: ended ? false : event.cancelAtPeriodEnd,
        stateAt: current.stateAt,
      };
    }
    case 'checkout_completed': {
      if (event.subscriptionId === null) return null;
      if (event.subscriptionId === current.subscriptionId) {
        // The subscription's own events already said more than the checkout can.
        if (current.status !== 'none' && current.status !== 'incomplete') return current;
        return { ...current, status: event.paid ? 'active' : current.status };
      }
      return {
        subscriptionId: event.subscriptionId,
        status: event.paid ? 'active' : 'incomplete',
        renewsAt: null,
        cancelAtPeriodEnd: false,
        stateAt: current.stateAt,
      };
    }
    case 'invoice_paid': {
      if (event.subscriptionId === null || !concernsTracked(current, event.subscriptionId)) {
        return null;
      }
      return {
        ...current,
        subscriptionId: event.subscriptionId,
        status: 'active',
        renewsAt: event.periodEnd ?? current.renewsAt,
      };
    }
    case 'invoice_failed': {
      if (current.subscriptionId === null || current.subscriptionId !== event.subscriptionId) {
        return null;
      }
      return { ...current, status: current.status === 'active' ? 'past_due' : current.status };
    }
    case 'unhandled':
      return null;
  }
}

/** Invoices count for the subscription the account has (or adopt one when it has none). */
function concernsTracked(current: BillingState, subscriptionId: string): boolean {
  return current.subscriptionId === null || current.subscriptionId === subscriptionId;
}
