import { Type } from 'typebox';
import { requireApiKey } from '../../auth.ts';
import { errorResponses } from '../../schemas.ts';
import type { App, RouteDeps } from '../../types.ts';

const ProxyItem = Type.Object({
  id: Type.String({ description: 'The value of `proxy`.' }),
  countries: Type.Array(Type.String(), {
    description: 'ISO 3166-1 alpha-2 codes this proxy serves (`proxy_country`); may be empty.',
  }),
});

/**
 * The operator's proxies a capture may name (PROXIES_FILE): ids and countries only, never
 * their addresses or credentials (docs/proxies.md).
 */
export function registerListProxies(app: App, deps: RouteDeps): void {
  app.get(
    '/v1/proxies',
    {
      schema: {
        tags: ['screenshots'],
        summary: "The operator's proxies of the capture options `proxy` and `proxy_country`",
        description:
          "Ids and countries only. Whether the account may use them is its plan's `proxies` " +
          'field (GET /v1/plans).',
        security: [{ apiKey: [] }],
        response: {
          200: Type.Object({ data: Type.Array(ProxyItem) }),
          ...errorResponses(401, 429, 500),
        },
      },
      onRequest: [deps.apiKeyHook, deps.rateLimits.otherHook()],
    },
    async (request) => {
      requireApiKey(request);
      return {
        data: deps.capture.proxies.list().map((p) => ({ id: p.id, countries: [...p.countries] })),
      };
    },
  );
}
