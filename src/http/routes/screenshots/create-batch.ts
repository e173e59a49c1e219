import { Type } from 'typebox';
import { BOUNDS } from '../../../domain/bounds.ts';
import { enqueueBatch } from '../../../domain/jobs/enqueue-batch.ts';
import { batchStatusUrl, statusUrl } from '../../../domain/jobs/job-answer.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses, tooLarge } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { BatchRequest } from './schemas.ts';

/**
 * POST /v1/screenshots/batch (docs/api.md, "Batches"): up to BOUNDS.jobs.batchMaxRequests
 * async captures in one request, under a body limit of their own. Counted as one request in
 * the account's per-minute capture window: the units are what each request costs, and the
 * plan's max_queued_jobs bounds how much a batch can queue.
 */
export function registerCreateBatch(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/screenshots/batch',
    {
      bodyLimit: BOUNDS.jobs.batchBodyBytes,
      schema: {
        tags: ['screenshots'],
        summary: 'Queue a batch of async captures (Pro)',
        description:
          `1 to ${BOUNDS.jobs.batchMaxRequests} capture bodies, each an async capture: each ` +
          "holds a quota unit, gets its own job and, with the batch's `webhook_url`, its own " +
          '`screenshot.succeeded` or `screenshot.failed` event; `batch.completed` `{batch_id, ' +
          'succeeded, failed}` follows the last one. A request that fails validation refuses ' +
          'the whole batch (400 naming `requests[i]`); a month that cannot cover every ' +
          'request refuses it with 402; nothing is queued or held then. Counts as one request ' +
          'in the per-minute capture rate.',
        security: [{ apiKey: [] }],
        body: BatchRequest,
        response: {
          202: Type.Object(
            {
              batch_id: Type.String({ description: 'The batch id (`bat_...`).' }),
              status_url: Type.String({
                format: 'uri',
                description: 'GET it for the batch and its jobs.',
              }),
              jobs: Type.Array(
                Type.Object({
                  id: Type.String({ description: 'The job id (`job_...`).' }),
                  status: Type.Literal('queued'),
                  status_url: Type.String({ format: 'uri' }),
                }),
                { description: "One job per request, in the requests' order." },
              ),
            },
            { description: 'Queued.' },
          ),
          ...errorResponses(400, 401, 402, 429, 500, 503),
          413: tooLarge(BOUNDS.jobs.batchBodyBytes),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.captureHook()],
    },
    async (request, reply) => {
      const auth = requireApiKey(request);
      const batch = await enqueueBatch(deps.jobs, {
        user: auth.user,
        keyId: auth.key.id,
        input: request.body,
      });
      const url = batchStatusUrl(deps.jobs, batch.id);
      return reply
        .status(202)
        .header('Location', url)
        .send({
          batch_id: batch.id,
          status_url: url,
          jobs: batch.jobs.map((job) => ({
            id: job.id,
            status: 'queued' as const,
            status_url: statusUrl(deps.jobs, job.id),
          })),
        });
    },
  );
}
