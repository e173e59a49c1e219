import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, MonitorPage, monitorPage } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** GET /v1/monitors: the account's monitors, newest first, in cursor pages. */
export function registerListMonitors(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.get(
    surface.base,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary("The account's monitors, most recent first"),
        security: surface.security,
        querystring: ListQuery,
        response: { 200: MonitorPage, ...errorResponses(400, 401, 429, 500) },
      },
      onRequest: surface.onRequest('read'),
    },
    async (request) => monitorPage(deps.monitors, surface.user(request), request.query),
  );
}
