import { createHash } from 'node:crypto';
import Stripe from 'stripe';
import type { BillingProvider } from '../../domain/billing/ports.ts';
import { AppError } from '../../domain/errors.ts';
import { parseSignedEvent } from './stripe-events.ts';

export interface StripeBillingOptions {
  secretKey: string;
  webhookSecrets: readonly string[];
  priceId: string;
  /** Another API address (tests run a local stand-in); unset = api.stripe.com. */
  apiBase?: URL | undefined;
  /** Per-call deadline; the SDK retries network failures with idempotency keys. */
  timeoutMs?: number;
}

/** Stripe Checkout (subscription mode) and the Billing Portal through the official SDK. */
export function createStripeBilling(options: StripeBillingOptions): BillingProvider {
  const base = options.apiBase;
  const stripe = new Stripe(options.secretKey, {
    maxNetworkRetries: 2,
    timeout: options.timeoutMs ?? 20_000,
    telemetry: false,
    appInfo: { name: 'shotsmith' },
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol === 'https:' ? ('https' as const) : ('http' as const),
        }
      : {}),
  });

  const call = async <T>(what: string, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      throw new AppError('overloaded', `the payment provider could not ${what}; retry shortly`, {
        cause: err,
      });
    }
  };

  return {
    name: 'stripe',
    async createCustomer({ accountId, email }) {
      const customer = await call('create the customer', () =>
        stripe.customers.create(
          { email, metadata: { account_id: String(accountId) } },
          // Two first checkouts at once (or a retry after a lost answer) get one customer.
          // The email is part of the key so that databases reusing account ids never share one.
          {
            idempotencyKey: `customer-${accountId}-${createHash('sha256').update(email).digest('hex').slice(0, 16)}`,
          },
        ),
      );
      return customer.id;
    },
    async createCheckout({ accountId, customerId, successUrl, cancelUrl }) {
      const metadata = { account_id: String(accountId) };
      const session = await call('start the checkout', () =>
        stripe.checkout.sessions.create({
          mode: 'subscription',
          customer: customerId,
          client_reference_id: String(accountId),
          line_items: [{ price: options.priceId, quantity: 1 }],
          success_url: successUrl,
          cancel_url: cancelUrl,
          metadata,
          subscription_data: { metadata },
        }),
      );
      if (!session.url)
        throw new AppError('overloaded', 'the payment provider gave no checkout URL');
      return session.url;
    },
    async createPortal({ customerId, returnUrl }) {
      const session = await call('open the billing portal', () =>
        stripe.billingPortal.sessions.create({ customer: customerId, return_url: returnUrl }),
      );
      return session.url;
    },
    parseWebhook({ payload, signature, now }) {
      return parseSignedEvent({ payload, signature, secrets: options.webhookSecrets, now });
    },
  };
}
