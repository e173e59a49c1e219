import { logIn } from '../../../domain/accounts/log-in.ts';
import { assertSameSite, setSessionCookie } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { Credentials, UserBody, userBody } from './schemas.ts';

export function registerLogIn(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/auth/login',
    {
      schema: {
        tags: ['account'],
        summary: 'Sign in; a new session id is issued every time',
        body: Credentials,
        response: { 200: UserBody, ...errorResponses(400, 401, 403, 413, 429, 500) },
      },
      onRequest: async (request) => assertSameSite(request, deps.dashboardOrigins),
    },
    async (request, reply) => {
      const { user, session } = await logIn(deps.ctx, { ...request.body, ip: request.ip });
      setSessionCookie(reply, session, deps.sessionCookie);
      return userBody(user);
    },
  );
}
