import { randomBytes } from 'node:crypto';
import {
  type BillingProvider,
  LOCAL_BILLING_PATH,
  type LocalBillingPages,
} from '../../domain/billing/ports.ts';
import { AppError } from '../../domain/errors.ts';
import { randomBase62, sha256Hex } from '../../lib/crypto.ts';
import { type Clock, DAY_MS, HOUR_MS } from '../../lib/time.ts';
import { signWebhookPayload } from './signature.ts';
import { parseSignedEvent } from './stripe-events.ts';

/**
 * The built-in payment provider: a stand-in for Stripe that runs inside the service, so
 * the whole upgrade flow works offline and in tests. Its checkout and portal are pages of
 * the service (src/http/routes/local-billing-pages.ts); paying, cancelling and period ends
 * produce Stripe-shaped events, signed with a per-process secret and handed to the same
 * webhook code path a real delivery takes. No money moves.
 */
export const LOCAL_LIMITS = {
  checkoutLifetimeMs: DAY_MS,
  portalLifetimeMs: HOUR_MS,
  /** Subscriptions moved on per settle run. */
  settleBatch: 100,
} as const;

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

/** What the local provider keeps (on Stripe's side of the fence, were it Stripe). */
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

export interface LocalBilling extends BillingProvider, LocalBillingPages {
  readonly name: 'local';
  /** Renews subscriptions whose period ended, or ends those set to cancel; how many moved. */
  settleDue(): Promise<number>;
}

export interface LocalBillingOptions {
  store: LocalBillingStore;
  clock: Clock;
  /** Origin of the service: the pages' URLs start with it. */
  publicUrl: string;
  /** The Pro price shown on the checkout page and put on invoices. */
  priceCents: number;
  /** Hands a signed event to the webhook code path (the one Stripe deliveries take). */
  deliver(payload: string, signature: string): Promise<void>;
}

const CHECKOUT_ID = /^cs_local_[0-9A-Za-z]{43}$/;
const PORTAL_ID = /^bps_local_[0-9A-Za-z]{43}$/;
const PRICE_ID = 'price_local_pro';

const notFound = () => new AppError('not_found', 'no such checkout or portal session');

export function createLocalBilling(options: LocalBillingOptions): LocalBilling {
  const { store, clock } = options;
  // Signer and verifier are this process, so a fresh secret per boot is enough, and nobody
  // outside can forge a local event through POST /v1/billing/webhook.
  const secret = `whsec_local_${randomBytes(32).toString('hex')}`;
  const pages = `${options.publicUrl}${LOCAL_BILLING_PATH}`;

  const deliver = async (type: string, object: object, eventId: string): Promise<void> => {
    const now = clock();
    const payload = JSON.stringify({
      id: eventId,
      object: 'event',
      api_version: 'local',
      created: Math.floor(now / 1000),
      livemode: false,
      type,
      data: { object },
    });
    await options.deliver(payload, signWebhookPayload(payload, secret, Math.floor(now / 1000)));
  };

  const subscriptionObject = (sub: LocalSubscription) => ({
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
          price: { id: PRICE_ID, unit_amount: options.priceCents, currency: 'usd' },
          quantity: 1,
        },
      ],
    },
    livemode: false,
  });

  const invoiceObject = (sub: LocalSubscription, reason: string) => ({
    id: `in_local_${sha256Hex(`${sub.id}:${sub.currentPeriodStart}`).slice(0, 24)}`,
    object: 'invoice',
    customer: sub.customerId,
    status: 'paid',
    billing_reason: reason,
    amount_paid: options.priceCents,
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
          amount: options.priceCents,
          period: { start: seconds(sub.currentPeriodStart), end: seconds(sub.currentPeriodEnd) },
        },
      ],
    },
    livemode: false,
  });

  /** Ids derived from what happened, so a redelivery is recognised as the same event. */
  const eventId = (what: string) => `evt_local_${sha256Hex(what).slice(0, 32)}`;

  const findCheckout = async (id: string): Promise<LocalSession> => {
    const session = CHECKOUT_ID.test(id) ? await store.findSession(id) : null;
    if (session?.kind !== 'checkout') throw notFound();
    return session;
  };

  const findPortal = async (id: string): Promise<LocalSession> => {
    const session = PORTAL_ID.test(id) ? await store.findSession(id) : null;
    if (session?.kind !== 'portal' || session.expiresAt <= clock()) throw notFound();
    return session;
  };

  const deliverCompletion = async (session: LocalSession): Promise<void> => {
    const sub = session.subscriptionId
      ? await store.findSubscription(session.subscriptionId)
      : null;
    if (!sub) throw new AppError('internal_error', 'completed checkout without its subscription');
    await deliver(
      'customer.subscription.created',
      subscriptionObject(sub),
      eventId(`${session.id}:subscription`),
    );
    await deliver(
      'invoice.paid',
      invoiceObject(sub, 'subscription_create'),
      eventId(`${session.id}:invoice`),
    );
    await deliver(
      'checkout.session.completed',
      {
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
      },
      eventId(`${session.id}:checkout`),
    );
  };

  return {
    name: 'local',

    async createCustomer() {
      return `cus_local_${randomBase62(24)}`;
    },

    async createCheckout({ accountId, customerId, successUrl, cancelUrl }) {
      const now = clock();
      const id = `cs_local_${randomBase62(43)}`;
      await store.insertSession({
        id,
        kind: 'checkout',
        userId: accountId,
        customerId,
        status: 'open',
        successUrl,
        cancelUrl,
        subscriptionId: null,
        createdAt: now,
        expiresAt: now + LOCAL_LIMITS.checkoutLifetimeMs,
      });
      return `${pages}/checkout/${id}`;
    },

    async createPortal({ accountId, customerId, returnUrl }) {
      const now = clock();
      const id = `bps_local_${randomBase62(43)}`;
      await store.insertSession({
        id,
        kind: 'portal',
        userId: accountId,
        customerId,
        status: 'open',
        successUrl: returnUrl,
        cancelUrl: null,
        subscriptionId: null,
        createdAt: now,
        expiresAt: now + LOCAL_LIMITS.portalLifetimeMs,
      });
      return `${pages}/portal/${id}`;
    },

    parseWebhook({ payload, signature, now }) {
      return parseSignedEvent({ payload, signature, secrets: [secret], now });
    },

    async viewCheckout(id) {
      const session = CHECKOUT_ID.test(id) ? await store.findSession(id) : null;
      if (session?.kind !== 'checkout') return null;
      const expired =
        session.status === 'expired' || (session.status === 'open' && session.expiresAt <= clock());
      return {
        status: expired ? 'expired' : session.status,
        priceCents: options.priceCents,
        cancelUrl: session.cancelUrl,
      };
    },

    async completeCheckout(id) {
      const session = await findCheckout(id);
      const now = clock();
      if (session.status === 'expired' || (session.status === 'open' && session.expiresAt <= now)) {
        throw new AppError(
          'conflict',
          'this checkout was abandoned or has expired; start a new one',
        );
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
      await deliverCompletion(completed);
      return completed.successUrl;
    },

    async abandonCheckout(id) {
      const session = await findCheckout(id);
      if (session.status === 'complete') {
        throw new AppError('conflict', 'this checkout is already paid');
      }
      await store.expireCheckout(id);
      return session.cancelUrl ?? session.successUrl;
    },

    async viewPortal(id) {
      const session = PORTAL_ID.test(id) ? await store.findSession(id) : null;
      if (session?.kind !== 'portal' || session.expiresAt <= clock()) return null;
      const sub = await store.latestSubscription(session.customerId);
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
    },

    async setCancelAtPeriodEnd(portalId, cancel) {
      const session = await findPortal(portalId);
      const latest = await store.latestSubscription(session.customerId);
      const sub =
        latest?.status === 'active'
          ? await store.setCancelAtPeriodEnd(latest.id, cancel, clock())
          : null;
      if (!sub) throw new AppError('conflict', 'there is no active subscription to change');
      // A fresh id each time: every change is news, and a retried click sends the state again.
      await deliver(
        'customer.subscription.updated',
        subscriptionObject(sub),
        `evt_local_${randomBase62(32)}`,
      );
    },

    async settleDue() {
      const now = clock();
      let moved = 0;
      for (const sub of await store.due(now, LOCAL_LIMITS.settleBatch)) {
        const from = sub.currentPeriodEnd;
        if (sub.cancelAtPeriodEnd) {
          const ended: LocalSubscription = { ...sub, status: 'canceled', updatedAt: now };
          // Deliver first, then record: a failed delivery is retried by the next run, and
          // the fixed event id makes the retry harmless.
          await deliver(
            'customer.subscription.deleted',
            subscriptionObject(ended),
            eventId(`${sub.id}:deleted`),
          );
          if (await store.advance(sub.id, from, ended)) moved++;
          continue;
        }
        // Periods count from the start date (the billing anchor), as Stripe's do, so a
        // subscription started on the 31st renews on the last day of shorter months.
        let k = 1;
        while (addMonths(sub.createdAt, k) <= now) k++;
        const start = addMonths(sub.createdAt, k - 1);
        const end = addMonths(sub.createdAt, k);
        const renewed: LocalSubscription = {
          ...sub,
          currentPeriodStart: start,
          currentPeriodEnd: end,
          updatedAt: now,
        };
        await deliver(
          'invoice.paid',
          invoiceObject(renewed, 'subscription_cycle'),
          eventId(`${sub.id}:invoice:${start}`),
        );
        await deliver(
          'customer.subscription.updated',
          subscriptionObject(renewed),
          eventId(`${sub.id}:renewed:${start}`),
        );
        if (await store.advance(sub.id, from, renewed)) moved++;
      }
      return moved;
    },
  };
}

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** The same time `n` calendar months later (UTC), the day clamped to the month's length. */
export function addMonths(ms: number, n: number): number {
  const d = new Date(ms);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + n;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}
