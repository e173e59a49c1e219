/** The checkout and portal sessions in the store: opening them and finding them by id. */

import { BOUNDS } from '../../../domain/bounds.ts';
import { AppError } from '../../../domain/errors.ts';
import { randomBase62 } from '../../../lib/crypto.ts';
import type { Clock } from '../../../lib/time.ts';
import type { LocalBillingStore, LocalSession } from './records.ts';

const CHECKOUT_ID = /^cs_local_[0-9A-Za-z]{43}$/;
const PORTAL_ID = /^bps_local_[0-9A-Za-z]{43}$/;

const notFound = () => new AppError('not_found', 'no such checkout or portal session');

/** Stores a new open checkout; its id. */
export async function openCheckout(
  store: LocalBillingStore,
  now: number,
  input: { userId: number; customerId: string; successUrl: string; cancelUrl: string | null },
): Promise<string> {
  const id = `cs_local_${randomBase62(43)}`;
  await store.insertSession({
    id,
    kind: 'checkout',
    userId: input.userId,
    customerId: input.customerId,
    status: 'open',
    successUrl: input.successUrl,
    cancelUrl: input.cancelUrl,
    subscriptionId: null,
    createdAt: now,
    expiresAt: now + BOUNDS.billing.localCheckoutLifetimeMs,
  });
  return id;
}

/** Stores a new portal session; its id. */
export async function openPortal(
  store: LocalBillingStore,
  now: number,
  input: { userId: number; customerId: string; returnUrl: string },
): Promise<string> {
  const id = `bps_local_${randomBase62(43)}`;
  await store.insertSession({
    id,
    kind: 'portal',
    userId: input.userId,
    customerId: input.customerId,
    status: 'open',
    successUrl: input.returnUrl,
    cancelUrl: null,
    subscriptionId: null,
    createdAt: now,
    expiresAt: now + BOUNDS.billing.localPortalLifetimeMs,
  });
  return id;
}

/** The checkout with this id, whatever its status; null when there is none. */
export async function lookupCheckout(
  store: LocalBillingStore,
  id: string,
): Promise<LocalSession | null> {
  const session = CHECKOUT_ID.test(id) ? await store.findSession(id) : null;
  return session?.kind === 'checkout' ? session : null;
}

/** The portal session with this id while it lasts; null when there is none or it expired. */
export async function lookupPortal(
  store: LocalBillingStore,
  id: string,
  clock: Clock,
): Promise<LocalSession | null> {
  const session = PORTAL_ID.test(id) ? await store.findSession(id) : null;
  return session?.kind === 'portal' && session.expiresAt > clock() ? session : null;
}

/** lookupCheckout, or not_found. */
export async function findCheckout(store: LocalBillingStore, id: string): Promise<LocalSession> {
  const session = await lookupCheckout(store, id);
  if (!session) throw notFound();
  return session;
}

/** lookupPortal, or not_found. */
export async function findPortal(
  store: LocalBillingStore,
  id: string,
  clock: Clock,
): Promise<LocalSession> {
  const session = await lookupPortal(store, id, clock);
  if (!session) throw notFound();
  return session;
}
