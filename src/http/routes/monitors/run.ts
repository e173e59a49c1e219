import { Type } from 'typebox';
import { runMonitorNow } from '../../../domain/monitors/run-now.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorParams } from './schemas.ts';

/**
 * POST /v1/monitors/{id}/run: a run now. It is a capture, so it counts in the per-minute
 * capture rate, and its unit is charged when it renders.
 */
export function registerRunMonitor(app: App, deps: RouteDeps): void {
  app.post(
    '/v1/monitors/:id/run',
    {
      schema: {
        tags: ['monitors'],
        summary: 'Run a monitor now',
        description:
          'Answers 202 with the run once it is recorded; GET /v1/monitors/{id}/runs shows it ' +
          'end. Its slot in the schedule stays.',
        security: [{ apiKey: [] }],
        params: MonitorParams,
        response: {
          202: Type.Object({
            id: Type.String({ description: 'The run id (`run_...`).' }),
            status: Type.Literal('running'),
          }),
          ...errorResponses(401, 404, 429, 500),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.captureHook()],
    },
    async (request, reply) => {
      const { user } = requireApiKey(request);
      const run = await runMonitorNow(deps.monitors, { user, id: request.params.id });
      return reply.status(202).send({ id: run.id, status: 'running' as const });
    },
  );
}
