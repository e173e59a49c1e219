import { Type } from 'typebox';
import { startCheckout } from '../../../domain/billing/start-checkout.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UrlBody } from './schemas.ts';

export function registerBillingCheckout(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/billing/checkout',
    {
      schema: {
        tags: ['billing'],
        summary: 'Start the Pro checkout with the payment provider',
        description:
          'Returns the payment page to send the browser to. The plan changes when the ' +
          "provider's webhook reports the payment, never on the way back to the dashboard.",
        security: [{ session: [] }],
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: {
          200: { ...UrlBody, description: 'The checkout page.' },
          ...errorResponses(400, 401, 403, 409, 413, 429, 500, 503),
        },
      },
      onRequest: [
        sessionHook(deps.ctx, deps.dashboardOrigins),
        deps.rateLimits.sessionChangeHook(),
      ],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      reply.header('Cache-Control', 'no-store');
      return startCheckout(deps.billing.ctx, { user });
    },
  );
}
