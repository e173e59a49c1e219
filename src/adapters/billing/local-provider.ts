/**
 * The built-in payment provider: a stand-in for Stripe that runs inside the service, so
 * the whole upgrade flow works offline and in tests. Its checkout and portal are pages of
 * the service (src/http/routes/billing/local-pages.ts); paying, cancelling and period ends
 * produce Stripe-shaped events, signed with a per-process secret and handed to the same
 * webhook code path a real delivery takes. No money moves.
 *
 * The parts, under local/: records.ts (what it keeps, its bounds), sessions.ts (checkout and
 * portal sessions in the store), pages.ts (what the pages do), page-html.ts (what they show),
 * renewals.ts (period ends) and events.ts (the Stripe-shaped events it raises).
 */
import { randomBytes } from 'node:crypto';
import {
  type BillingProvider,
  LOCAL_BILLING_PATH,
  type LocalBillingPages,
} from '../../domain/billing/ports.ts';
import { randomBase62 } from '../../lib/crypto.ts';
import type { Clock } from '../../lib/time.ts';
import { createLocalEvents } from './local/events.ts';
import {
  abandonCheckout,
  completeCheckout,
  setCancelAtPeriodEnd,
  viewCheckout,
  viewPortal,
} from './local/pages.ts';
import type { LocalBillingStore, LocalContext } from './local/records.ts';
import { settleDue } from './local/renewals.ts';
import { openCheckout, openPortal } from './local/sessions.ts';
import { parseSignedEvent } from './stripe-events.ts';

export type { LocalBillingStore, LocalSession, LocalSubscription } from './local/records.ts';

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

export function createLocalBilling(options: LocalBillingOptions): LocalBilling {
  const { store, clock } = options;
  // Signer and verifier are this process, so a fresh secret per boot is enough, and nobody
  // outside can forge a local event through POST /v1/billing/webhook.
  const secret = `whsec_local_${randomBytes(32).toString('hex')}`;
  const pages = `${options.publicUrl}${LOCAL_BILLING_PATH}`;
  const ctx: LocalContext = {
    store,
    clock,
    priceCents: options.priceCents,
    events: createLocalEvents({
      clock,
      priceCents: options.priceCents,
      secret,
      deliver: (payload, signature) => options.deliver(payload, signature),
    }),
  };

  return {
    name: 'local',

    async createCustomer() {
      return `cus_local_${randomBase62(24)}`;
    },

    async createCheckout({ accountId, customerId, successUrl, cancelUrl }) {
      const input = { userId: accountId, customerId, successUrl, cancelUrl };
      const id = await openCheckout(store, clock(), input);
      return `${pages}/checkout/${id}`;
    },

    async createPortal({ accountId, customerId, returnUrl }) {
      const id = await openPortal(store, clock(), { userId: accountId, customerId, returnUrl });
      return `${pages}/portal/${id}`;
    },

    parseWebhook({ payload, signature, now }) {
      return parseSignedEvent({ payload, signature, secrets: [secret], now });
    },

    viewCheckout: (id) => viewCheckout(ctx, id),
    completeCheckout: (id) => completeCheckout(ctx, id),
    abandonCheckout: (id) => abandonCheckout(ctx, id),
    viewPortal: (id) => viewPortal(ctx, id),
    setCancelAtPeriodEnd: (portalId, cancel) => setCancelAtPeriodEnd(ctx, portalId, cancel),
    settleDue: () => settleDue(ctx),
  };
}
