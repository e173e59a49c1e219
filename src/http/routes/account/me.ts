import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UserBody, userBody } from './schemas.ts';

export function registerMe(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/auth/me',
    {
      schema: {
        tags: ['account'],
        security: [{ session: [] }],
        summary: 'The signed-in account',
        response: { 200: UserBody, ...errorResponses(401, 429, 500) },
      },
      onRequest: [sessionHook(deps.ctx, deps.dashboardOrigins), deps.rateLimits.sessionReadHook()],
    },
    async (request) => userBody(requireAccount(request)),
  );
}
