import { logOut } from '../../../domain/accounts/log-out.ts';
import { clearSessionCookie, SESSION_COOKIE, sessionHook } from '../../auth.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export function registerLogOut(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/auth/logout',
    {
      schema: {
        tags: ['account'],
        security: [{ session: [] }],
        summary: 'End the session (server-side)',
        response: { 200: SuccessBody, ...errorResponses(401, 403, 500) },
      },
      onRequest: sessionHook(deps.ctx, deps.dashboardOrigins),
    },
    async (request, reply) => {
      const token = request.cookies[SESSION_COOKIE];
      if (token) await logOut(deps.ctx, { token });
      clearSessionCookie(reply, deps.sessionCookie);
      return { success: true, message: 'logged out' };
    },
  );
}
