import { Type } from 'typebox';
import { dayBounds, monthBounds } from '../../../lib/time.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UsageBody, usageBody } from './schemas.ts';

/** The dashboard's usage view: key-independent, with captures per day this period. */
export function registerAccountUsage(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/account/usage',
    {
      schema: {
        tags: ['dashboard'],
        security: [{ session: [] }],
        summary: 'Usage for the signed-in account, with captures per UTC day this period',
        response: {
          200: Type.Intersect([
            UsageBody,
            Type.Object({
              days: Type.Array(Type.Object({ day: Type.String(), count: Type.Integer() })),
            }),
          ]),
          ...errorResponses(401, 429, 500),
        },
      },
      onRequest: [sessionHook(deps.ctx, deps.dashboardOrigins), deps.rateLimits.sessionReadHook()],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      const now = deps.ctx.clock();
      const month = monthBounds(now);
      const [usage, days] = await Promise.all([
        usageBody(deps, user),
        deps.ctx.store.quota.days(user.id, dayBounds(month.start).key, dayBounds(now).key),
      ]);
      reply.header('Cache-Control', 'no-store');
      return { ...usage, days };
    },
  );
}
