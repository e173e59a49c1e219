import { Type } from 'typebox';
import { openPortal } from '../../../domain/billing/open-portal.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UrlBody } from './schemas.ts';

export function registerBillingPortal(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/billing/portal',
    {
      schema: {
        tags: ['billing'],
        summary: "Open the payment provider's page to manage or cancel the subscription",
        security: [{ session: [] }],
        body: Type.Optional(Type.Object({}, { additionalProperties: false })),
        response: {
          200: { ...UrlBody, description: 'The billing portal page.' },
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
      return openPortal(deps.billing.ctx, { user });
    },
  );
}
