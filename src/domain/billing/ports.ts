import type { BillingProvider } from '../../adapters/billing/provider.ts';
import { DAY_MS } from '../../lib/time.ts';
import type { DomainContext } from '../context.ts';

export interface BillingContext extends DomainContext {
  billing: BillingProvider;
  /** Where the provider sends the browser back: the dashboard (DECISIONS.md section 5). */
  returnUrls: { success: string; cancel: string; portal: string };
}

export const BILLING_LIMITS = {
  /**
   * Applied event ids are kept this long for deduplication; Stripe stops retrying a
   * delivery after three days.
   */
  eventRetentionMs: 30 * DAY_MS,
} as const;
