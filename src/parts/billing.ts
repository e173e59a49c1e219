/**
 * The billing part: the payment provider config names (Stripe, or the built-in local one),
 * the billing context its routes are given, and its housekeeping (the maintenance timer).
 */
import { createLocalBilling, type LocalBilling } from '../adapters/billing/local-provider.ts';
import type { DatabaseHandle } from '../adapters/db/connect.ts';
import { createLocalBillingStore } from '../adapters/db/local-billing-store.ts';
import type { Config } from '../config/config.ts';
import type { BillingContext, BillingProvider } from '../domain/billing/ports.ts';
import { receiveWebhook } from '../domain/billing/receive-webhook.ts';
import type { DomainContext } from '../domain/context.ts';
import type { Logger } from '../lib/logger.ts';
import { createBillingHousekeeping } from '../maintenance.ts';
import type { Part } from './part.ts';

export interface BillingGives {
  ctx: BillingContext;
  /** The built-in provider, when it is the one in use (its pages are served). */
  local: LocalBilling | null;
  /** Billing housekeeping now (main.ts also runs it every minute, maintenance.ts). */
  settle(): Promise<number>;
}

export async function billingPart(options: {
  config: Pick<Config, 'billing' | 'server'>;
  ctx: DomainContext;
  database: DatabaseHandle;
  logger: Logger;
}): Promise<Part<BillingGives>> {
  const { config, ctx, logger } = options;
  const dashboard = config.server.dashboardOrigins[0] ?? config.server.publicUrl.origin;
  const returnUrls = {
    success: `${dashboard}/dashboard?billing=success`,
    cancel: `${dashboard}/dashboard?billing=cancel`,
    portal: `${dashboard}/dashboard`,
  };
  const settings = config.billing;
  let local: LocalBilling | null = null;
  let provider: BillingProvider;
  if (settings.provider === 'stripe') {
    // Loaded only when configured (the Stripe SDK is a slow import).
    const { createStripeBilling } = await import('../adapters/billing/stripe-provider.ts');
    provider = createStripeBilling({
      secretKey: settings.secretKey,
      webhookSecrets: settings.webhookSecrets,
      priceId: settings.priceId,
      apiBase: settings.apiBase,
    });
  } else {
    local = createLocalBilling({
      store: createLocalBillingStore(options.database.db, options.database.dialect),
      clock: ctx.clock,
      publicUrl: config.server.publicUrl.origin,
      priceCents: ctx.plans.pro.price_cents,
      // The same path as a Stripe delivery: signature check, then the event applied once.
      // The context is read when an event is delivered, once it is built below.
      deliver: async (payload, signature) => {
        const { event, outcome } = await receiveWebhook(billingCtx, { payload, signature });
        logger.info(
          { event_id: event.id, event_type: event.type, outcome },
          'billing event (local provider)',
        );
      },
    });
    provider = local;
  }
  const billingCtx: BillingContext = { ...ctx, billing: provider, returnUrls };
  return {
    gives: {
      ctx: billingCtx,
      local,
      settle: createBillingHousekeeping({ store: ctx.store, clock: ctx.clock, local }),
    },
  };
}
