import { applyBillingEvent, type BillingEventOutcome } from './apply-billing-event.ts';
import type { BillingContext } from './ports.ts';
import type { BillingEvent } from './subscription-state.ts';

/**
 * A provider's webhook delivery: the signature is checked on the raw body (AppError
 * invalid_request when it fails), then the event is applied. Stripe's deliveries and the
 * local provider's both come through here.
 */
export async function receiveWebhook(
  ctx: BillingContext,
  options: { payload: string; signature: string | undefined },
): Promise<{ event: BillingEvent; outcome: BillingEventOutcome }> {
  const event = ctx.billing.parseWebhook({
    payload: options.payload,
    signature: options.signature,
    now: ctx.clock(),
  });
  return { event, outcome: await applyBillingEvent(ctx, { event }) };
}
