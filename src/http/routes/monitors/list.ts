import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, MonitorPage, monitorPage } from './schemas.ts';

/** GET /v1/monitors: the account's monitors, newest first, in cursor pages. */
export function registerListMonitors(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/monitors',
    {
      schema: {
        tags: ['monitors'],
        summary: "The account's monitors, most recent first",
        security: [{ apiKey: [] }],
        querystring: ListQuery,
        response: { 200: MonitorPage, ...errorResponses(400, 401, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => monitorPage(deps.monitors, requireApiKey(request).user, request.query),
  );
}
