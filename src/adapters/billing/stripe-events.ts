import type { BillingEvent, SubscriptionStatus } from '../../domain/billing/subscription-state.ts';
import { BOUNDS } from '../../domain/bounds.ts';
import { AppError } from '../../domain/errors.ts';
import { verifyWebhookSignature } from './signature.ts';

/**
 * Stripe's event JSON (which the local provider produces too) into a BillingEvent. Reads
 * only the fields billing needs and accepts both the current API shape (period on the
 * subscription items, invoice subscription under `parent`) and the older one.
 */
type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** An id field that may be expanded into its object. */
const idOf = (v: unknown): string | null => str(v) ?? (isObject(v) ? str(v.id) : null);
const seconds = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 1e11 ? v * 1000 : null;

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'active',
  past_due: 'past_due',
  canceled: 'canceled',
  incomplete_expired: 'canceled',
  incomplete: 'incomplete',
  unpaid: 'unpaid',
  // A paused subscription collects nothing and grants nothing until resumed.
  paused: 'unpaid',
};

/** Verifies the signature, then parses and translates; AppError invalid_request otherwise. */
export function parseSignedEvent(input: {
  payload: string;
  signature: string | undefined;
  secrets: readonly string[];
  now: number;
}): BillingEvent {
  const check = verifyWebhookSignature({
    payload: input.payload,
    header: input.signature,
    secrets: input.secrets,
    now: input.now,
  });
  if (check === 'stale' || check === 'future') {
    throw new AppError(
      'invalid_request',
      `webhook timestamp is more than ${BOUNDS.billing.webhookToleranceSeconds} seconds from now`,
    );
  }
  if (check !== 'ok') throw new AppError('invalid_request', 'invalid webhook signature');
  let json: unknown;
  try {
    json = JSON.parse(input.payload);
  } catch {
    throw new AppError('invalid_request', 'webhook body is not valid JSON');
  }
  return toBillingEvent(json);
}

export function toBillingEvent(json: unknown): BillingEvent {
  if (!isObject(json) || !isObject(json.data) || !isObject(json.data.object)) {
    throw new AppError('invalid_request', 'webhook body is not an event');
  }
  const id = str(json.id);
  const type = str(json.type);
  const createdAt = seconds(json.created);
  if (id === null || type === null || createdAt === null) {
    throw new AppError('invalid_request', 'webhook event needs id, type and created');
  }
  const object = json.data.object;
  const base = {
    id,
    type,
    createdAt,
    accountId: accountIdOf(object),
    customerId: idOf(object.customer),
  };

  switch (type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      if (object.mode !== 'subscription') return { ...base, kind: 'unhandled' };
      const paid =
        object.payment_status === 'paid' || object.payment_status === 'no_payment_required';
      return {
        ...base,
        kind: 'checkout_completed',
        subscriptionId: idOf(object.subscription),
        paid,
      };
    }
    case 'customer.subscription.created':
    case 'customer.subscription.updated':
    case 'customer.subscription.deleted': {
      const subscriptionId = str(object.id);
      const status =
        type === 'customer.subscription.deleted' ? 'canceled' : STATUS[String(object.status)];
      if (subscriptionId === null || status === undefined) return { ...base, kind: 'unhandled' };
      return {
        ...base,
        kind: 'subscription',
        subscriptionId,
        status,
        renewsAt: periodEndOf(object),
        cancelAtPeriodEnd:
          object.cancel_at_period_end === true || seconds(object.cancel_at) !== null,
      };
    }
    case 'invoice.paid':
      return {
        ...base,
        kind: 'invoice_paid',
        subscriptionId: invoiceSubscriptionOf(object),
        periodEnd: invoicePeriodEndOf(object),
      };
    case 'invoice.payment_failed':
      return { ...base, kind: 'invoice_failed', subscriptionId: invoiceSubscriptionOf(object) };
    default:
      return { ...base, kind: 'unhandled' };
  }
}

/** Our account id: the checkout's client reference, or the metadata we attach everywhere. */
function accountIdOf(object: Json): number | null {
  const details = isObject(object.parent) ? object.parent.subscription_details : undefined;
  const candidates = [
    object.client_reference_id,
    isObject(object.metadata) ? object.metadata.account_id : undefined,
    isObject(details) && isObject(details.metadata) ? details.metadata.account_id : undefined,
  ];
  for (const c of candidates) {
    if (typeof c === 'string' && /^[1-9]\d{0,15}$/.test(c)) return Number(c);
  }
  return null;
}

function periodEndOf(subscription: Json): number | null {
  let end = seconds(subscription.current_period_end);
  const items = isObject(subscription.items) ? subscription.items.data : undefined;
  if (Array.isArray(items)) {
    for (const item of items) {
      const e = isObject(item) ? seconds(item.current_period_end) : null;
      if (e !== null && (end === null || e > end)) end = e;
    }
  }
  return end;
}

function invoiceSubscriptionOf(invoice: Json): string | null {
  const details = isObject(invoice.parent) ? invoice.parent.subscription_details : undefined;
  return (isObject(details) ? idOf(details.subscription) : null) ?? idOf(invoice.subscription);
}

function invoicePeriodEndOf(invoice: Json): number | null {
  const lines = isObject(invoice.lines) ? invoice.lines.data : undefined;
  let end: number | null = null;
  if (Array.isArray(lines)) {
    for (const line of lines) {
      const e = isObject(line) && isObject(line.period) ? seconds(line.period.end) : null;
      if (e !== null && (end === null || e > end)) end = e;
    }
  }
  return end;
}
