import { Type } from 'typebox';
import { signUp } from '../../../domain/accounts/sign-up.ts';
import { BOUNDS } from '../../../domain/bounds.ts';
import { assertSameSite, setSessionCookie } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UserBody, userBody } from './schemas.ts';

export function registerSignUp(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/auth/signup',
    {
      schema: {
        tags: ['account'],
        summary: 'Create an account and start a session',
        body: Type.Object(
          {
            email: Type.String({
              minLength: 1,
              maxLength: BOUNDS.account.emailMax,
              format: 'email',
            }),
            password: Type.String({
              minLength: BOUNDS.account.passwordMin,
              maxLength: BOUNDS.account.passwordMax,
            }),
          },
          { additionalProperties: false },
        ),
        response: { 201: UserBody, ...errorResponses(400, 403, 409, 413, 500) },
      },
      onRequest: async (request) => assertSameSite(request, deps.dashboardOrigins),
    },
    async (request, reply) => {
      const { user, session } = await signUp(deps.ctx, request.body);
      setSessionCookie(reply, session, deps.sessionCookie);
      return reply.status(201).send(userBody(user));
    },
  );
}
