import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from './types.ts';

export const API_VERSION = '1.0.0';

/**
 * The OpenAPI 3.1 document is generated from the route schemas; it is served at
 * /v1/openapi.json, rendered at /docs/api beside the documentation site (docs-site.ts;
 * swagger-ui's assets come from the npm package, no CDN) and committed as openapi.json (a
 * test fails when the committed copy drifts).
 */
export async function registerDocs(app: App, publicUrl: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Shotsmith screenshot API',
        version: API_VERSION,
        description:
          'Render a web page in headless Chromium and get a hosted image back. Programmatic ' +
          'endpoints take an `X-API-Key` header; dashboard endpoints use the `session` cookie.',
      },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          session: { type: 'apiKey', in: 'cookie', name: 'session' },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs/api', uiConfig: { deepLinking: true } });
  app.get('/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}

/** The document as committed: server URL fixed so it does not depend on the machine. */
export function committedDocument(app: App): unknown {
  const doc = structuredClone(app.swagger()) as { servers?: unknown };
  doc.servers = [{ url: 'http://localhost:8080' }];
  return doc;
}
