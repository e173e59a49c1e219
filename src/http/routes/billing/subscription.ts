import { Type } from 'typebox';
import { getSubscription } from '../../../domain/billing/get-subscription.ts';
import { SUBSCRIPTION_STATUSES } from '../../../domain/billing/subscription-state.ts';
import { toIso } from '../../../lib/time.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses, IsoDateTime } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export const SubscriptionBody = Type.Object({
  plan: Type.String({ description: 'The plan in force (free or pro).' }),
  status: Type.String({
    enum: [...SUBSCRIPTION_STATUSES],
    description: 'The subscription as the payment provider last reported it; none without one.',
  }),
  renews_at: Type.Union([IsoDateTime, Type.Null()], {
    description:
      'End of the paid period: the renewal date, or the last day of Pro when cancelling at ' +
      'period end. Null without a live subscription.',
  }),
  cancel_at_period_end: Type.Boolean(),
});

export function registerBillingSubscription(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/billing/subscription',
    {
      schema: {
        tags: ['billing'],
        summary: 'The plan, subscription status and renewal date',
        security: [{ session: [] }],
        response: { 200: SubscriptionBody, ...errorResponses(401, 429, 500) },
      },
      onRequest: [sessionHook(deps.ctx, deps.dashboardOrigins), deps.rateLimits.sessionReadHook()],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      const view = await getSubscription(deps.billing.ctx, { user });
      reply.header('Cache-Control', 'no-store');
      return {
        plan: view.plan,
        status: view.status,
        renews_at: view.renewsAt === null ? null : toIso(view.renewsAt),
        cancel_at_period_end: view.cancelAtPeriodEnd,
      };
    },
  );
}
