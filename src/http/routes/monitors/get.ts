import { getMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorItem, MonitorParams, monitorItem } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** GET /v1/monitors/{id}: another account's monitor is a 404 like an unknown one. */
export function registerGetMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.get(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('A monitor'),
        security: surface.security,
        params: MonitorParams,
        response: { 200: MonitorItem, ...errorResponses(401, 404, 429, 500) },
      },
      onRequest: surface.onRequest('read'),
    },
    async (request) => {
      const user = surface.user(request);
      return monitorItem(await getMonitor(deps.monitors, { user, id: request.params.id }));
    },
  );
}
