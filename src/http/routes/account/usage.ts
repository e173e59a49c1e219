import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';
import { UsageBody, usageBody } from './schemas.ts';

export function registerGetUsage(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/usage',
    {
      schema: {
        tags: ['usage'],
        summary: 'Current-period quota consumption and the per-minute capture rate',
        security: [{ apiKey: [] }],
        response: { 200: UsageBody, ...errorResponses(401, 429, 500) },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      const { user } = requireApiKey(request);
      return usageBody(deps, user);
    },
  );
}
