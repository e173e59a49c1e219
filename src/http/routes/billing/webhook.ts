import { Type } from 'typebox';
import { WEBHOOK_SIGNATURE_HEADER } from '../../../domain/billing/ports.ts';
import { receiveWebhook } from '../../../domain/billing/receive-webhook.ts';
import { BOUNDS } from '../../../domain/bounds.ts';
import { errorResponses, tooLarge } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

/**
 * POST /v1/billing/webhook: the payment provider's event deliveries. The signature covers
 * the exact bytes sent, so this route (in its own scope) keeps the body as text instead of
 * parsing it; verification and the rest happen in the domain.
 */
export function registerBillingWebhook(app: App, deps: RouteDeps): void {
  app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser(
      'application/json',
      { parseAs: 'string', bodyLimit: BOUNDS.http.webhookBodyBytes },
      (_request, body, done) => done(null, body),
    );
    scope.post(
      '/v1/billing/webhook',
      {
        bodyLimit: BOUNDS.http.webhookBodyBytes,
        schema: {
          tags: ['billing'],
          summary: 'Payment provider events (Stripe webhook endpoint)',
          description:
            'Signed with the `Stripe-Signature` header (HMAC-SHA256, ' +
            `${BOUNDS.billing.webhookToleranceSeconds}-second tolerance, ` +
            'several `v1` signatures accepted). Each event id is applied once; events older ' +
            'than the recorded state are acknowledged and ignored.',
          response: {
            200: Type.Object({
              received: Type.Literal(true),
              outcome: Type.String({
                enum: ['applied', 'ignored', 'duplicate', 'unknown_account', 'unhandled'],
                description:
                  'applied; ignored (older than the recorded state, or not about the ' +
                  "account's subscription); duplicate; unknown_account; unhandled (a type " +
                  'billing does not act on).',
              }),
            }),
            ...errorResponses(400, 500),
            413: tooLarge(BOUNDS.http.webhookBodyBytes),
          },
        },
      },
      async (request) => {
        const header = request.headers[WEBHOOK_SIGNATURE_HEADER];
        const { event, outcome } = await receiveWebhook(deps.billing.ctx, {
          payload: typeof request.body === 'string' ? request.body : '',
          signature: typeof header === 'string' ? header : undefined,
        });
        const fields = { event_id: event.id, event_type: event.type, outcome };
        if (outcome === 'unknown_account') {
          request.log.warn(
            { ...fields, customer: event.customerId, account: event.accountId },
            'billing event for an unknown account acknowledged',
          );
        } else {
          request.log.info(fields, 'billing event');
        }
        return { received: true as const, outcome };
      },
    );
  });
}
