import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { ListQuery, ScreenshotPage, screenshotPage } from './schemas.ts';

export function registerListScreenshots(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/screenshots',
    {
      schema: {
        tags: ['screenshots'],
        summary:
          "The account's screenshots, most recent first (Pro; Free accounts get an empty list)",
        security: [{ apiKey: [] }],
        querystring: ListQuery,
        response: { 200: ScreenshotPage, ...errorResponses(400, 401, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => screenshotPage(deps.capture, requireApiKey(request).user, request.query),
  );
}
