import { deleteMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorParams } from './schemas.ts';

/** DELETE /v1/monitors/{id}: the monitor and its runs; their images follow retention. */
export function registerDeleteMonitor(app: App, deps: RouteDeps): void {
  app.delete(
    '/v1/monitors/:id',
    {
      schema: {
        tags: ['monitors'],
        summary: 'Delete a monitor and its runs',
        security: [{ apiKey: [] }],
        params: MonitorParams,
        response: { 200: SuccessBody, ...errorResponses(401, 404, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      await deleteMonitor(deps.monitors, { user, id: request.params.id });
      return { success: true, message: 'monitor deleted' };
    },
  );
}
