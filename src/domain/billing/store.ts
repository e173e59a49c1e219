import type { BillingState, SubscriptionStatus } from './subscription-state.ts';

/**
 * An account's link to the payment provider, and the provider's events already applied. A port of
 * the domain (the Kysely adapters in adapters/db serve SQLite and PostgreSQL); ../store.ts
 * composes the ports into the Store and re-exports their types.
 */
/** An account's link to the payment provider and its subscription as last reported. */
export interface BillingAccount {
  userId: number;
  provider: string;
  customerId: string;
  subscriptionId: string | null;
  status: SubscriptionStatus;
  renewsAt: number | null;
  cancelAtPeriodEnd: boolean;
  stateAt: number | null;
}

export interface BillingStore {
  find(userId: number): Promise<BillingAccount | null>;
  /**
   * The same, holding the account for the rest of the transaction so concurrent events for
   * one account apply one after the other (PostgreSQL row lock; SQLite writes are serial).
   */
  findForUpdate(userId: number): Promise<BillingAccount | null>;
  findUserIdByCustomer(customerId: string): Promise<number | null>;
  /**
   * Links the provider's customer to the account unless it already has one with this
   * provider; the customer id in effect afterwards (a concurrent first checkout may win).
   */
  saveCustomer(input: {
    userId: number;
    provider: string;
    customerId: string;
    now: number;
  }): Promise<string>;
  /** Records an event id: false when it was recorded before (the event was applied). */
  recordEvent(input: {
    id: string;
    type: string;
    userId: number | null;
    receivedAt: number;
  }): Promise<boolean>;
  saveState(input: {
    userId: number;
    provider: string;
    customerId: string;
    state: BillingState;
    now: number;
  }): Promise<void>;
  /** Forgets event ids received before `before` (providers stop retrying long before). */
  pruneEvents(before: number): Promise<number>;
}
