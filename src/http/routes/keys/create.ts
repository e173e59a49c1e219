import { Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { createKey } from '../../../domain/keys/create-key.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { KeyItem, keyItem } from './schemas.ts';

export function registerCreateKey(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/keys',
    {
      schema: {
        tags: ['keys'],
        security: [{ session: [] }],
        summary: 'Create an API key (the plaintext is shown once)',
        body: Type.Optional(
          Type.Object(
            { name: Type.Optional(Type.String({ maxLength: BOUNDS.account.keyNameMax })) },
            { additionalProperties: false },
          ),
        ),
        response: {
          201: Type.Intersect(
            [KeyItem, Type.Object({ key: Type.String(), signing_secret: Type.String() })],
            {
              description:
                'The new key. `key` is the plaintext and `signing_secret` signs render ' +
                'links (`sig_live_...`): store both now, neither is shown again.',
            },
          ),
          ...errorResponses(400, 401, 403, 413, 429, 500),
        },
      },
      onRequest: [
        sessionHook(deps.ctx, deps.dashboardOrigins),
        deps.rateLimits.sessionChangeHook(),
      ],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      const created = await createKey(deps.ctx, { userId: user.id, name: request.body?.name });
      reply.header('Cache-Control', 'no-store');
      return reply.status(201).send({
        ...keyItem(created),
        key: created.key,
        signing_secret: created.signingSecret,
      });
    },
  );
}
