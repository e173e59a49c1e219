import { Type } from 'typebox';
import { AppError } from '../../../domain/errors.ts';
import { batchAnswer, isBatchId } from '../../../domain/jobs/job-answer.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { BatchAnswer } from './schemas.ts';

/**
 * GET /v1/screenshots/batch/{batch_id} (docs/api.md, "Batches"): the batch's counts and each
 * job as GET /v1/screenshots/{id} answers it. Another account's batch is a 404 like an
 * unknown one.
 */
export function registerGetBatch(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/screenshots/batch/:batch_id',
    {
      schema: {
        tags: ['screenshots'],
        summary: 'A batch of async captures, with the status of each',
        description:
          '`status` is `running` until every job has ended, then `completed`; the counts ' +
          '`queued`, `rendering`, `succeeded` and `failed` add up to `total`. `jobs` are in ' +
          "the requests' order, each as GET /v1/screenshots/{id} answers it.",
        security: [{ apiKey: [] }],
        params: Type.Object({
          batch_id: Type.String({ maxLength: 64, description: 'The batch id (`bat_...`).' }),
        }),
        response: {
          200: BatchAnswer,
          ...errorResponses(400, 401, 404, 429, 500),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request, reply) => {
      const { user } = requireApiKey(request);
      const id = request.params.batch_id;
      reply.header('Cache-Control', 'no-store');
      const found = isBatchId(id) ? await deps.ctx.store.batches.get(user.id, id) : null;
      if (!found) throw new AppError('not_found', 'batch not found');
      return batchAnswer(deps.jobs, found.batch, found.jobs);
    },
  );
}
