import { deleteMonitor } from '../../../domain/monitors/manage-monitors.ts';
import { errorResponses, SuccessBody } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { MonitorParams } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** DELETE /v1/monitors/{id}: the monitor and its runs; their images follow retention. */
export function registerDeleteMonitor(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.delete(
    `${surface.base}/:id`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary('Delete a monitor and its runs'),
        security: surface.security,
        params: MonitorParams,
        response: {
          200: SuccessBody,
          ...errorResponses(401, ...surface.refusals(true), 404, 429, 500),
        },
      },
      onRequest: surface.onRequest('other'),
    },
    async (request) => {
      const user = surface.user(request);
      await deleteMonitor(deps.monitors, { user, id: request.params.id });
      return { success: true, message: 'monitor deleted' };
    },
  );
}
