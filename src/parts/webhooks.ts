/**
 * The webhook deliverer (docs/api.md, "Webhooks"): on every node with ASYNC_WORKERS above 0,
 * a pump that takes due deliveries one at a time and sends each through an egress proxy of
 * its own. Shutdown's first step lets go of the deliveries being sent, for another node.
 */

import type { EgressPolicy } from '../adapters/egress/policy.ts';
import { startPump } from '../adapters/jobs/pump.ts';
import { createProxyWebhookSender } from '../adapters/webhooks/proxy-sender.ts';
import type { Config } from '../config/config.ts';
import { BOUNDS } from '../domain/bounds.ts';
import type { DomainContext } from '../domain/context.ts';
import { attemptDelivery, DELIVERY_LEASE_MS } from '../domain/jobs/deliver-webhooks.ts';
import type { Logger } from '../lib/logger.ts';
import type { Part } from './part.ts';

/** Webhook deliveries in flight at once on a node. */
const WEBHOOK_SENDS_AT_ONCE = 8;

export interface WebhooksGives {
  /** Look for due deliveries now (a job just ended: it may have one to send). */
  wake(): void;
}

export function webhooksPart(options: {
  config: Config['jobs'];
  ctx: DomainContext;
  /** This node's name on the leases it takes. */
  owner: string;
  /** The egress rules deliveries go out under. */
  policy: EgressPolicy;
  /** Waits between delivery attempts. */
  backoffMs: readonly number[];
  logger: Logger;
}): Part<WebhooksGives> {
  const { ctx, owner } = options;
  const sender = createProxyWebhookSender(options.policy, options.logger);
  const deliveryOptions = { owner, backoffMs: options.backoffMs, batch: 1 };
  const deliverer = startPump({
    name: 'webhooks',
    concurrency: options.config.workers > 0 ? WEBHOOK_SENDS_AT_ONCE : 0,
    pollMs: BOUNDS.jobs.pollIntervalMs,
    take: async () =>
      (
        await ctx.store.webhooks.claimDue({
          owner,
          now: ctx.clock(),
          leaseMs: DELIVERY_LEASE_MS,
          limit: 1,
          perAccount: BOUNDS.jobs.deliveriesInFlightPerAccount,
        })
      )[0] ?? null,
    run: (delivery, stop) => attemptDelivery(ctx, sender, delivery, deliveryOptions, stop),
    release: async (delivery) => {
      await ctx.store.webhooks.release({ id: delivery.id, owner });
    },
    logger: options.logger,
  });
  return {
    gives: { wake: () => deliverer.wake() },
    stopTaking: () => deliverer.close({ abandon: true }),
    close: async () => {
      await deliverer.close();
      await sender.close();
    },
  };
}
