import { Type } from 'typebox';
import { rotateWebhookSecret, webhookSecret } from '../../../domain/jobs/webhook-secret.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

const SecretBody = Type.Object({
  secret: Type.String({
    description: '`whsec_` + base64 of 32 bytes; the HMAC key is the decoded bytes.',
  }),
});

/** GET /v1/webhooks/secret and POST /v1/webhooks/secret/rotate (docs/api.md, "Webhooks"). */
export function registerWebhookSecret(app: App, deps: RouteDeps): void {
  const onRequest = sessionHook(deps.ctx, deps.dashboardOrigins);
  app.get(
    '/v1/webhooks/secret',
    {
      schema: {
        tags: ['webhooks'],
        security: [{ session: [] }],
        summary: "The account's webhook signing secret",
        response: { 200: SecretBody, ...errorResponses(401, 403, 429, 500) },
      },
      onRequest: [onRequest, deps.rateLimits.sessionReadHook()],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      reply.header('Cache-Control', 'no-store');
      return { secret: await webhookSecret(deps.ctx, user.id) };
    },
  );
  app.post(
    '/v1/webhooks/secret/rotate',
    {
      schema: {
        tags: ['webhooks'],
        security: [{ session: [] }],
        summary:
          'Replace the webhook secret; every delivery from now on is signed with the new one',
        response: { 200: SecretBody, ...errorResponses(401, 403, 429, 500) },
      },
      onRequest: [onRequest, deps.rateLimits.sessionChangeHook()],
    },
    async (request, reply) => {
      const user = requireAccount(request);
      reply.header('Cache-Control', 'no-store');
      return { secret: await rotateWebhookSecret(deps.ctx, user.id) };
    },
  );
}
