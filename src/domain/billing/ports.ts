import type { DomainContext } from '../context.ts';
import type { BillingEvent } from './subscription-state.ts';

export type BillingProviderName = 'stripe' | 'local';

/**
 * A payment provider: Stripe, or the built-in local provider that stands in for it offline
 * and in tests. Config picks one in the composition root (src/deps.ts); both deliver Stripe-shaped, signed events to
 * the same webhook code path.
 */
export interface BillingProvider {
  readonly name: BillingProviderName;
  /** Creates the provider's customer for an account (called once per account). */
  createCustomer(input: { accountId: number; email: string }): Promise<string>;
  /** A hosted checkout for the Pro subscription; the URL to send the browser to. */
  createCheckout(input: {
    accountId: number;
    customerId: string;
    successUrl: string;
    cancelUrl: string;
  }): Promise<string>;
  /** A hosted page to manage or cancel the subscription; its URL. */
  createPortal(input: {
    accountId: number;
    customerId: string;
    returnUrl: string;
  }): Promise<string>;
  /**
   * Verifies the signature on the raw body and translates the event. AppError
   * invalid_request when the signature, its timestamp or the payload is not acceptable.
   */
  parseWebhook(input: {
    payload: string;
    signature: string | undefined;
    now: number;
  }): BillingEvent;
}

/** The header a provider's event delivery carries its signature in (Stripe's scheme). */
export const WEBHOOK_SIGNATURE_HEADER = 'stripe-signature';

export interface BillingContext extends DomainContext {
  billing: BillingProvider;
  /** Where the provider sends the browser back: the dashboard (docs/api.md, "Billing"). */
  returnUrls: { success: string; cancel: string; portal: string };
}

/** Where the local provider's checkout and portal pages are served (http/routes/billing/local-pages.ts). */
export const LOCAL_BILLING_PATH = '/billing/local';

export interface LocalCheckoutView {
  status: 'open' | 'complete' | 'expired';
  priceCents: number;
  cancelUrl: string | null;
}

export interface LocalPortalView {
  subscription: {
    status: 'active' | 'canceled';
    currentPeriodEnd: number;
    cancelAtPeriodEnd: boolean;
  } | null;
  returnUrl: string;
}

/**
 * The pages the built-in local provider needs the service to serve, standing in for
 * Stripe's hosted checkout and portal (adapters/billing/local-provider.ts implements them).
 */
export interface LocalBillingPages {
  /** Null when there is no such checkout (or the id is not one). */
  viewCheckout(id: string): Promise<LocalCheckoutView | null>;
  /** Pays: the subscription starts and its events are delivered. The URL to go to next. */
  completeCheckout(id: string): Promise<string>;
  /** Abandons the checkout; the URL to go to next. Changes nothing else. */
  abandonCheckout(id: string): Promise<string>;
  viewPortal(id: string): Promise<LocalPortalView | null>;
  setCancelAtPeriodEnd(portalId: string, cancel: boolean): Promise<void>;
}
