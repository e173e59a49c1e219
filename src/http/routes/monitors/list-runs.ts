import { BOUNDS } from '../../../domain/bounds.ts';
import { listRuns } from '../../../domain/monitors/manage-monitors.ts';
import { cursorPage, errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, MonitorParams, RunPage, runItem } from './schemas.ts';
import type { MonitorSurface } from './surface.ts';

/** GET /v1/monitors/{id}/runs: newest first, cursor pages. */
export function registerListMonitorRuns(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  app.get(
    `${surface.base}/:id/runs`,
    {
      schema: {
        tags: surface.tags,
        summary: surface.summary("A monitor's runs, most recent first"),
        security: surface.security,
        params: MonitorParams,
        querystring: ListQuery,
        response: { 200: RunPage, ...errorResponses(400, 401, 404, 429, 500) },
      },
      onRequest: surface.onRequest('read'),
    },
    async (request) => {
      const user = surface.user(request);
      const page = await listRuns(deps.monitors, {
        user,
        id: request.params.id,
        limit: request.query.limit ?? BOUNDS.listing.defaultPageSize,
        cursor: request.query.cursor,
      });
      return cursorPage(page, runItem);
    },
  );
}
