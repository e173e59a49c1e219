import type { BillingEvent } from '../../domain/billing/subscription-state.ts';

export type BillingProviderName = 'stripe' | 'local';

/**
 * A payment provider: Stripe, or the built-in local provider that stands in for it offline
 * and in tests. Config picks one in deps.ts; both deliver Stripe-shaped, signed events to
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
