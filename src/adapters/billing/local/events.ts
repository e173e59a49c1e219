/**
 * The events the local provider raises, shaped like Stripe's (only the fields the webhook code
 * reads), signed with the provider's secret and handed to the webhook code path.
 */
import { randomBase62, sha256Hex } from '../../../lib/crypto.ts';
import type { Clock } from '../../../lib/time.ts';
import { signWebhookPayload } from '../signature.ts';
import type { LocalSession, LocalSubscription } from './records.ts';

export interface LocalEvents {
  /** A checkout was paid: subscription created, first invoice paid, checkout completed. */
  checkoutCompleted(session: LocalSession, sub: LocalSubscription): Promise<void>;
  /** The customer changed the subscription (cancel at period end, or resume). */
  subscriptionChanged(sub: LocalSubscription): Promise<void>;
  /** A subscription set to cancel reached its period end. */
  subscriptionEnded(ended: LocalSubscription): Promise<void>;
  /** A subscription moved into a new period: its invoice paid, the subscription updated. */
  subscriptionRenewed(renewed: LocalSubscription): Promise<void>;
}

export interface LocalEventsOptions {
  clock: Clock;
  priceCents: number;
  /** The webhook signing secret the provider's parseWebhook accepts. */
  secret: string;
  /** Hands a signed event to the webhook code path (the one Stripe deliveries take). */
  deliver(payload: string, signature: string): Promise<void>;
}

const PRICE_ID = 'price_local_pro';

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** Ids derived from what happened, so a redelivery is recognised as the same event. */
const eventId = (what: string) => `evt_local_${sha256Hex(what).slice(0, 32)}`;

export function createLocalEvents(options: LocalEventsOptions): LocalEvents {
  const { priceCents } = options;

  const deliver = async (type: string, object: object, id: string): Promise<void> => {
    const now = options.clock();
    const payload = JSON.stringify({
      id,
      object: 'event',
      api_version: 'local',
      created: Math.floor(now / 1000),
      livemode: false,
      type,
      data: { object },
    });
    await options.deliver(
      payload,
      signWebhookPayload(payload, options.secret, Math.floor(now / 1000)),
    );
  };

  return {
    async checkoutCompleted(session, sub) {
      await deliver(
        'customer.subscription.created',
        subscriptionObject(sub, priceCents),
        eventId(`${session.id}:subscription`),
      );
      await deliver(
        'invoice.paid',
        invoiceObject(sub, 'subscription_create', priceCents),
        eventId(`${session.id}:invoice`),
      );
      await deliver(
        'checkout.session.completed',
        checkoutObject(session, sub),
        eventId(`${session.id}:checkout`),
      );
    },

    async subscriptionChanged(sub) {
      // A fresh id each time: every change is news, and a retried click sends the state again.
      await deliver(
        'customer.subscription.updated',
        subscriptionObject(sub, priceCents),
        `evt_local_${randomBase62(32)}`,
      );
    },

    async subscriptionEnded(ended) {
      await deliver(
        'customer.subscription.deleted',
        subscriptionObject(ended, priceCents),
        eventId(`${ended.id}:deleted`),
      );
    },

    async subscriptionRenewed(renewed) {
      const start = renewed.currentPeriodStart;
      await deliver(
        'invoice.paid',
        invoiceObject(renewed, 'subscription_cycle', priceCents),
        eventId(`${renewed.id}:invoice:${start}`),
      );
      await deliver(
        'customer.subscription.updated',
        subscriptionObject(renewed, priceCents),
        eventId(`${renewed.id}:renewed:${start}`),
      );
    },
  };
}

const subscriptionObject = (sub: LocalSubscription, priceCents: number) => ({
  id: sub.id,
  object: 'subscription',
  customer: sub.customerId,
  status: sub.status,
  cancel_at_period_end: sub.cancelAtPeriodEnd,
  cancel_at: sub.cancelAtPeriodEnd ? seconds(sub.currentPeriodEnd) : null,
  created: seconds(sub.createdAt),
  ended_at: sub.status === 'canceled' ? seconds(sub.updatedAt) : null,
  metadata: { account_id: String(sub.userId) },
  items: {
    object: 'list',
    data: [
      {
        id: `si_${sub.id}`,
        object: 'subscription_item',
        current_period_start: seconds(sub.currentPeriodStart),
        current_period_end: seconds(sub.currentPeriodEnd),
        price: { id: PRICE_ID, unit_amount: priceCents, currency: 'usd' },
        quantity: 1,
      },
    ],
  },
  livemode: false,
});

const invoiceObject = (sub: LocalSubscription, reason: string, priceCents: number) => ({
  id: `in_local_${sha256Hex(`${sub.id}:${sub.currentPeriodStart}`).slice(0, 24)}`,
  object: 'invoice',
  customer: sub.customerId,
  status: 'paid',
  billing_reason: reason,
  amount_paid: priceCents,
  currency: 'usd',
  parent: {
    type: 'subscription_details',
    subscription_details: {
      subscription: sub.id,
      metadata: { account_id: String(sub.userId) },
    },
  },
  lines: {
    object: 'list',
    data: [
      {
        amount: priceCents,
        period: { start: seconds(sub.currentPeriodStart), end: seconds(sub.currentPeriodEnd) },
      },
    ],
  },
  livemode: false,
});

const checkoutObject = (session: LocalSession, sub: LocalSubscription) => ({
  id: session.id,
  object: 'checkout.session',
  mode: 'subscription',
  status: 'complete',
  payment_status: 'paid',
  client_reference_id: String(session.userId),
  customer: session.customerId,
  subscription: sub.id,
  metadata: { account_id: String(session.userId) },
  livemode: false,
});
