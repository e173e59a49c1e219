import type { BillingProvider } from '../../adapters/billing/provider.ts';
import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';

export interface BillingContext extends DomainContext {
  billing: BillingProvider;
  /** Where the provider sends the browser back: the dashboard (docs/api.md, "Billing"). */
  returnUrls: { success: string; cancel: string; portal: string };
}

/** The `billing` part of the bounds table (domain/bounds.ts). */
export const BILLING_LIMITS = BOUNDS.billing;
