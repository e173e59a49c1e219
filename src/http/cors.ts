import cors from '@fastify/cors';
import type { App } from './types.ts';

/** Response headers a dashboard on another origin needs to read. */
export const CORS_EXPOSED_HEADERS = [
  'Retry-After',
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Cache',
  'X-Target-Status',
  'X-Render-Time-Ms',
];

/**
 * CORS for the dashboard origins only, with credentials (the session cookie). Any other
 * origin gets no CORS headers at all, so a browser page elsewhere can neither read answers
 * nor pass a preflight; servers and curl do not use CORS and are unaffected.
 */
export async function registerCors(app: App, dashboardOrigins: readonly string[]): Promise<void> {
  const allowed = new Set(dashboardOrigins);
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    // PATCH: the dashboard changes monitors (PATCH /v1/account/monitors/{id}).
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: ['Content-Type', 'X-API-Key', 'X-Request-Id'],
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 600,
  });
}
