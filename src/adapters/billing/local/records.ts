/**
 * What the local provider keeps (on Stripe's side of the fence, were it Stripe). Its bounds
 * are the `billing.local...` entries of the bounds table (domain/bounds.ts).
 */
import type { Clock } from '../../../lib/time.ts';
import type { LocalEvents } from './events.ts';

export interface LocalSession {
  /** Unguessable: the id is the capability to pay, abandon or manage. */
  id: string;
  kind: 'checkout' | 'portal';
  userId: number;
  customerId: string;
  /** checkout: open, complete or expired (abandoned); portal: open. */
  status: 'open' | 'complete' | 'expired';
  /** checkout: where paying leads; portal: the return link. */
  successUrl: string;
  cancelUrl: string | null;
  subscriptionId: string | null;
  createdAt: number;
  expiresAt: number;
}

export interface LocalSubscription {
  id: string;
  userId: number;
  customerId: string;
  status: 'active' | 'canceled';
  currentPeriodStart: number;
  currentPeriodEnd: number;
  cancelAtPeriodEnd: boolean;
  createdAt: number;
  updatedAt: number;
}

export interface LocalBillingStore {
  insertSession(session: LocalSession): Promise<void>;
  findSession(id: string): Promise<LocalSession | null>;
  /**
   * Marks an open checkout complete and creates its subscription, atomically. not_open when
   * it was completed or abandoned meanwhile; already_subscribed when the customer has an
   * active subscription (a second checkout opened before the first was paid).
   */
  completeCheckout(input: {
    sessionId: string;
    subscription: LocalSubscription;
  }): Promise<'completed' | 'not_open' | 'already_subscribed'>;
  /** open -> expired; false when the checkout was not open. */
  expireCheckout(sessionId: string): Promise<boolean>;
  findSubscription(id: string): Promise<LocalSubscription | null>;
  /** The customer's newest subscription. */
  latestSubscription(customerId: string): Promise<LocalSubscription | null>;
  /** Sets the flag on an active subscription; the updated subscription or null. */
  setCancelAtPeriodEnd(id: string, cancel: boolean, now: number): Promise<LocalSubscription | null>;
  /** Active subscriptions whose period has ended. */
  due(now: number, limit: number): Promise<LocalSubscription[]>;
  /** Moves a subscription on from the period ending `fromPeriodEnd`; false if already moved. */
  advance(
    id: string,
    fromPeriodEnd: number,
    next: Pick<
      LocalSubscription,
      'status' | 'currentPeriodStart' | 'currentPeriodEnd' | 'cancelAtPeriodEnd' | 'updatedAt'
    >,
  ): Promise<boolean>;
}

export type { LocalCheckoutView, LocalPortalView } from '../../../domain/billing/ports.ts';

/** What the parts of one local provider share, handed to each explicitly. */
export interface LocalContext {
  store: LocalBillingStore;
  clock: Clock;
  /** The Pro price shown on the checkout page and put on invoices. */
  priceCents: number;
  events: LocalEvents;
}
