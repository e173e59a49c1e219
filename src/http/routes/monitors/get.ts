import { getMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorItem, MonitorParams, monitorItem } from './schemas.ts';

/** GET /v1/monitors/{id}: another account's monitor is a 404 like an unknown one. */
export function registerGetMonitor(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/monitors/:id',
    {
      schema: {
        tags: ['monitors'],
        summary: 'A monitor',
        security: [{ apiKey: [] }],
        params: MonitorParams,
        response: { 200: MonitorItem, ...errorResponses(401, 404, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      return monitorItem(await getMonitor(deps.monitors, { user, id: request.params.id }));
    },
  );
}
