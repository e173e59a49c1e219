import { Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { AppError } from '../../../domain/errors.ts';
import type { WebhookDelivery } from '../../../domain/store.ts';
import { toIso } from '../../../lib/time.ts';
import { requireAccount, sessionHook } from '../../auth.ts';
import { errorResponses, NullableIso, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

const DeliveryItem = Type.Object({
  id: Type.String({ description: 'The `webhook-id` of every attempt.' }),
  job_id: Type.String(),
  url: Type.String(),
  event_type: Type.String(),
  status: Type.Union([
    Type.Literal('pending'),
    Type.Literal('delivered'),
    Type.Literal('failed'),
    Type.Literal('gone'),
  ]),
  attempts: Type.Integer(),
  next_attempt_at: NullableIso,
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const item = (d: WebhookDelivery) => ({
  id: d.id,
  job_id: d.jobId,
  url: d.url,
  event_type: d.eventType,
  status: d.status,
  attempts: d.attempts,
  next_attempt_at: d.nextAttemptAt === null ? null : toIso(d.nextAttemptAt),
  last_status: d.lastStatus,
  last_error: d.lastError,
  created_at: toIso(d.createdAt),
  updated_at: toIso(d.updatedAt),
});

const DELIVERY_ID = /^msg_[0-9A-Za-z]{24}$/;

const RESEND_REFUSALS = {
  busy: 'the delivery is already being sent or waiting for its next attempt',
  too_many: `${BOUNDS.jobs.maxPendingResends} deliveries of this account are already waiting to be sent`,
} as const;
const notFound = () => new AppError('not_found', 'delivery not found');

/** The dashboard's view of webhook deliveries: the newest, each attempt, and a resend. */
export function registerWebhookDeliveries(app: App, deps: RouteDeps): void {
  const onRequest = sessionHook(deps.ctx, deps.dashboardOrigins);
  app.get(
    '/v1/webhooks/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        security: [{ session: [] }],
        summary: `The account's newest webhook deliveries (at most ${BOUNDS.jobs.deliveriesListed})`,
        response: {
          200: Type.Object({ data: Type.Array(DeliveryItem) }),
          ...errorResponses(401, 403, 429, 500),
        },
      },
      onRequest: [onRequest, deps.rateLimits.sessionReadHook()],
    },
    async (request) => {
      const user = requireAccount(request);
      const list = await deps.ctx.store.webhooks.list(user.id, BOUNDS.jobs.deliveriesListed);
      return { data: list.map(item) };
    },
  );
  app.get(
    '/v1/webhooks/deliveries/:id/attempts',
    {
      schema: {
        tags: ['webhooks'],
        security: [{ session: [] }],
        summary: `A delivery's attempts (the newest ${BOUNDS.jobs.attemptsListed}), oldest first`,
        params: Type.Object({ id: Type.String() }),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                attempted_at: Type.String({ format: 'date-time' }),
                status_code: Type.Union([Type.Integer(), Type.Null()]),
                error: Type.Union([Type.String(), Type.Null()]),
                duration_ms: Type.Integer(),
              }),
            ),
          }),
          ...errorResponses(401, 403, 404, 429, 500),
        },
      },
      onRequest: [onRequest, deps.rateLimits.sessionReadHook()],
    },
    async (request) => {
      const user = requireAccount(request);
      if (!DELIVERY_ID.test(request.params.id)) throw notFound();
      const attempts = await deps.ctx.store.webhooks.attempts(
        user.id,
        request.params.id,
        BOUNDS.jobs.attemptsListed,
      );
      if (attempts === null) throw notFound();
      return {
        data: attempts.map((a) => ({
          attempted_at: toIso(a.attemptedAt),
          status_code: a.statusCode,
          error: a.error,
          duration_ms: a.durationMs,
        })),
      };
    },
  );
  app.post(
    '/v1/webhooks/deliveries/:id/resend',
    {
      schema: {
        tags: ['webhooks'],
        security: [{ session: [] }],
        summary:
          'Send a finished delivery again now (same webhook-id); 409 while it is being sent ' +
          'or waiting, or with 10 of the account waiting; draws on the non-capture rate',
        params: Type.Object({ id: Type.String() }),
        response: { 200: SuccessBody, ...errorResponses(401, 403, 404, 409, 429, 500) },
      },
      onRequest: [onRequest, deps.rateLimits.sessionOtherHook()],
    },
    async (request) => {
      const user = requireAccount(request);
      if (!DELIVERY_ID.test(request.params.id)) throw notFound();
      const outcome = await deps.ctx.store.webhooks.resend(user.id, request.params.id, {
        now: deps.ctx.clock(),
        maxPending: BOUNDS.jobs.maxPendingResends,
      });
      if (outcome === 'not_found') throw notFound();
      if (outcome !== 'queued') throw new AppError('conflict', RESEND_REFUSALS[outcome]);
      return { success: true, message: 'delivery queued' };
    },
  );
}
