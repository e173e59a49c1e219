import { Type } from 'typebox';
import { listKeys } from '../../../domain/keys/list-keys.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { KeyItem, keyItem } from './schemas.ts';

export function registerListKeys(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/keys',
    {
      schema: {
        tags: ['keys'],
        security: [{ session: [] }],
        summary: 'List active API keys, newest first (prefix and metadata only)',
        response: {
          200: Type.Object({ data: Type.Array(KeyItem) }),
          ...errorResponses(401, 429, 500),
        },
      },
      onRequest: [sessionHook(deps.ctx, deps.dashboardOrigins), deps.rateLimits.sessionReadHook()],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      reply.header('Cache-Control', 'no-store');
      return { data: (await listKeys(deps.ctx, { userId: user.id })).map(keyItem) };
    },
  );
}
