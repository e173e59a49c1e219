import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { AppError, isAppError } from '../domain/errors.ts';
import type { App, HttpMetrics } from './types.ts';

const isLoopback = (ip: string | undefined): boolean => {
  if (ip === undefined) return false;
  const bare = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
  return bare === '::1' || (isIP(bare) === 4 && bare.startsWith('127.'));
};

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Who may read /metrics (docs/deployment.md, "Production defaults"). Without a token: a loopback client only,
 * meaning the connection comes from loopback and it was not forwarded on behalf of another
 * client (behind a trusted proxy on loopback, `request.ip` is the client X-Forwarded-For
 * names). With METRICS_TOKEN: exactly `Authorization: Bearer <token>`, from anywhere,
 * compared in constant time (digests of equal length). Everyone else gets the same 404 as
 * an unknown route, so the endpoint is not advertised.
 */
function mayReadMetrics(request: FastifyRequest, token: string | undefined): boolean {
  if (token === undefined) {
    return isLoopback(request.socket.remoteAddress) && isLoopback(request.ip);
  }
  const header = request.headers.authorization ?? '';
  const match = /^Bearer ([^\s]+)$/i.exec(header.trim());
  return timingSafeEqual(digest(match?.[1] ?? ''), digest(token)) && match !== null;
}

/** Request, capture and refusal metrics, and GET /metrics in Prometheus' text format. */
export function registerMetrics(
  app: App,
  metrics: HttpMetrics,
  access: { token: string | undefined },
): void {
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
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!mayReadMetrics(request, access.token)) {
      throw new AppError('not_found', `no route for ${request.method} /metrics`);
    }
    reply.header('Content-Type', metrics.registry.contentType);
    reply.header('Cache-Control', 'no-store');
    return metrics.registry.metrics();
  });
}
