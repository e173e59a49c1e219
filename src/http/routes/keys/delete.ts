import { Type } from 'typebox';
import { AppError } from '../../../domain/errors.ts';
import { revokeKey } from '../../../domain/keys/revoke-key.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses, parseId, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

export function registerDeleteKey(app: App, deps: RouteDeps): void {
  app.delete(
    '/v1/keys/:id',
    {
      schema: {
        tags: ['keys'],
        security: [{ session: [] }],
        summary: 'Revoke an API key; it is refused at once, in-flight captures included',
        params: Type.Object({ id: Type.String({ description: 'The key id (positive integer).' }) }),
        response: { 200: SuccessBody, ...errorResponses(400, 401, 403, 404, 429, 500) },
      },
      onRequest: [
        sessionHook(deps.ctx, deps.dashboardOrigins),
        deps.rateLimits.sessionChangeHook(),
      ],
    },
    async (request) => {
      const user = requireAccount(request);
      const keyId = parseId(request.params.id);
      if (keyId === null) throw new AppError('invalid_request', 'invalid key id');
      await revokeKey(deps.ctx, { userId: user.id, keyId });
      return { success: true, message: 'api key deleted' };
    },
  );
}
