import { BOUNDS } from '../../../domain/bounds.ts';
import { listRuns } from '../../../domain/monitors/manage-monitors.ts';
import { requireApiKey } from '../../auth.ts';
import { cursorPage, errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, MonitorParams, RunPage, runItem } from './schemas.ts';

/** GET /v1/monitors/{id}/runs: newest first, cursor pages. */
export function registerListMonitorRuns(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/monitors/:id/runs',
    {
      schema: {
        tags: ['monitors'],
        summary: "A monitor's runs, most recent first",
        security: [{ apiKey: [] }],
        params: MonitorParams,
        querystring: ListQuery,
        response: { 200: RunPage, ...errorResponses(400, 401, 404, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
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
