import { Type } from 'typebox';
import { AppError } from '../../../domain/errors.ts';
import { replaceSigningSecret } from '../../../domain/keys/signing-secret.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses, parseId } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export function registerReplaceSigningSecret(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/keys/:id/signing-secret',
    {
      schema: {
        tags: ['keys'],
        security: [{ session: [] }],
        summary: "Replace a key's signing secret (shown once); links signed with the old fail",
        params: Type.Object({ id: Type.String({ description: 'The key id (positive integer).' }) }),
        response: {
          200: Type.Object(
            {
              id: Type.Integer({ minimum: 1 }),
              signing_secret: Type.String({
                description: 'The new secret: store it now, it is never shown again.',
              }),
            },
            { description: 'The new signing secret.' },
          ),
          ...errorResponses(400, 401, 403, 404, 429, 500),
        },
      },
      onRequest: [
        sessionHook(deps.ctx, deps.dashboardOrigins),
        deps.rateLimits.sessionChangeHook(),
      ],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      const keyId = parseId(request.params.id);
      if (keyId === null) throw new AppError('invalid_request', 'invalid key id');
      const secret = await replaceSigningSecret(deps.ctx, { userId: user.id, keyId });
      reply.header('Cache-Control', 'no-store');
      return { id: keyId, signing_secret: secret };
    },
  );
}
