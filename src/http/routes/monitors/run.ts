import { Type } from 'typebox';
import { runMonitorNow } from '../../../domain/monitors/run-now.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorParams } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/**
 * POST /v1/monitors/{id}/run: a run now. It is a capture, so it counts in the per-minute
 * capture rate, and its unit is charged when it renders.
 */
export function registerRunMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.post(
    `${surface.base}/:id/run`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('Run a monitor now'),
        description:
          'Answers 202 with the run once it is recorded; GET /v1/monitors/{id}/runs shows it ' +
          'end. Its slot in the schedule stays.',
        security: surface.security,
        params: MonitorParams,
        response: {
          202: Type.Object({
            id: Type.String({ description: 'The run id (`run_...`).' }),
            status: Type.Literal('running'),
          }),
          ...errorResponses(401, ...surface.refusals(true), 404, 409, 429, 500),
        },
      },
      onRequest: surface.onRequest('capture'),
    },
    async (request, reply) => {
      const user = surface.user(request);
      const run = await runMonitorNow(deps.monitors, { user, id: request.params.id });
      return reply.status(202).send({ id: run.id, status: 'running' as const });
    },
  );
}
