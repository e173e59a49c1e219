import type { Metrics } from '../adapters/metrics/metrics.ts';
import { isAppError } from '../domain/errors.ts';
import type { App } from './types.ts';

/** Request, capture and refusal metrics, and GET /metrics in Prometheus' text format. */
export function registerMetrics(app: App, metrics: Metrics): void {
  app.addHook('onError', async (request, _reply, err) => {
    if (!isAppError(err)) return;
    const route = request.routeOptions.url ?? '';
    if (err.code === 'quota_exceeded') metrics.refused('quota');
    else if (err.code === 'url_not_allowed') metrics.refused('ssrf');
    else if (err.code === 'rate_limited') {
      metrics.refused(
        route.startsWith('/demo') ? 'demo' : route === '/v1/auth/login' ? 'login' : 'rate',
      );
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    if (route === '/v1/screenshots' && request.method === 'POST' && reply.statusCode === 201) {
      const cache = reply.getHeader('x-cache') === 'HIT' ? 'hit' : 'miss';
      metrics.captureSeconds.observe({ cache }, reply.elapsedTime / 1000);
    }
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.header('Content-Type', metrics.registry.contentType);
    reply.header('Cache-Control', 'no-store');
    return metrics.registry.metrics();
  });
}
