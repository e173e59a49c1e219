import { BOUNDS } from '../bounds.ts';
import type { DomainContext } from '../context.ts';
import { isAppError } from '../errors.ts';
import type { DeliveryStatus, WebhookDelivery } from '../store.ts';
import type { WebhookSender } from './ports.ts';
import { signWebhook, webhookSecret } from './webhook-secret.ts';

export interface DeliveryOptions {
  owner: string;
  /** Waits between attempts (BOUNDS.jobs.webhookBackoffMs; tests shorten them). */
  backoffMs: readonly number[];
  /** Deliveries sent at once by one call. */
  batch: number;
}

/** How long a delivery is held by the worker sending it. */
export const DELIVERY_LEASE_MS = BOUNDS.jobs.webhookTimeoutMs * 2;

/**
 * Sends the webhook deliveries that are due (docs/api.md, "Webhooks"), each attempt signed
 * anew (Standard Webhooks: the same `webhook-id`, this attempt's timestamp) and recorded. A
 * 2xx ends a delivery; 410 Gone stops it for good; anything else, no answer within the
 * timeout, or an address the egress rules refuse is retried after the next wait, until the
 * waits run out (more than 24 hours after the first attempt). Returns how many were sent.
 */
export async function deliverDueWebhooks(
  ctx: DomainContext,
  sender: WebhookSender,
  options: DeliveryOptions,
): Promise<number> {
  const due = await ctx.store.webhooks.claimDue({
    owner: options.owner,
    now: ctx.clock(),
    leaseMs: DELIVERY_LEASE_MS,
    limit: options.batch,
    perAccount: BOUNDS.jobs.deliveriesInFlightPerAccount,
  });
  await Promise.all(due.map((d) => attemptDelivery(ctx, sender, d, options)));
  return due.length;
}

/**
 * One attempt at one claimed delivery, recorded with what follows it. When `stop` aborts
 * (the node is shutting down) the attempt is dropped unrecorded and the delivery let go at
 * once for another node: the receiver may see it twice, under the same `webhook-id`, which
 * the scheme provides for.
 */
export async function attemptDelivery(
  ctx: DomainContext,
  sender: WebhookSender,
  delivery: WebhookDelivery,
  options: DeliveryOptions,
  stop?: AbortSignal,
): Promise<void> {
  const started = ctx.clock();
  const timestamp = Math.floor(started / 1000);
  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const secret = await webhookSecret(ctx, delivery.userId);
    const res = await sender.send({
      url: delivery.url,
      body: delivery.payload,
      timeoutMs: BOUNDS.jobs.webhookTimeoutMs,
      ...(stop ? { signal: stop } : {}),
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Shotsmith-Webhooks/1',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, delivery.id, timestamp, delivery.payload),
      },
    });
    statusCode = res.status;
    if (res.status < 200 || res.status >= 300) {
      error = `HTTP ${res.status}${res.body ? `: ${res.body}` : ''}`.slice(
        0,
        BOUNDS.jobs.webhookErrorMax,
      );
    }
  } catch (err) {
    error = (isAppError(err) || err instanceof Error ? err.message : String(err)).slice(
      0,
      BOUNDS.jobs.webhookErrorMax,
    );
  }
  // An answer that came is recorded as usual; only an attempt cut off is let go.
  if (stop?.aborted && statusCode === null) {
    await ctx.store.webhooks.release({ id: delivery.id, owner: options.owner });
    return;
  }
  const finished = ctx.clock();
  const wait = options.backoffMs[delivery.attempts];
  let next: { status: DeliveryStatus; nextAttemptAt: number | null };
  if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
    next = { status: 'delivered', nextAttemptAt: null };
  } else if (statusCode === 410) {
    next = { status: 'gone', nextAttemptAt: null };
  } else if (wait === undefined) {
    next = { status: 'failed', nextAttemptAt: null };
  } else {
    next = { status: 'pending', nextAttemptAt: finished + wait };
  }
  await ctx.store.webhooks.recordAttempt(
    { id: delivery.id, owner: options.owner },
    { attemptedAt: started, statusCode, error, durationMs: finished - started },
    next,
  );
}
