import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { BOUNDS } from './domain/bounds.ts';
import { AppError } from './domain/errors.ts';
import { apiKeyHook } from './http/auth.ts';
import { sessionCookiePolicy } from './http/cookie-policy.ts';
import { registerCors } from './http/cors.ts';
import { registerDocs } from './http/docs.ts';
import { registerDocsSite } from './http/docs-site.ts';
import { registerErrorHandling, sendAppError } from './http/error-handler.ts';
import { registerMetrics } from './http/metrics.ts';
import { RateLimits } from './http/rate-limit.ts';
import { registerRoutes } from './http/routes/index.ts';
import { ErrorBody } from './http/schemas.ts';
import { buildSerializer } from './http/serialization.ts';
import type { App, HttpDeps, RouteDeps } from './http/types.ts';
import { validatorCompiler } from './http/validation.ts';
import { registerWeb } from './http/web.ts';

export interface BuildAppOptions {
  /** Where JSON logs go (tests capture them); default stdout. */
  logStream?: NodeJS.WritableStream;
  /** The built landing page and dashboard; default web/dist. */
  webDistDir?: string;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Headers and body fields that must never reach a log line. */
export const LOG_REDACT = [
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'res.headers["set-cookie"]',
  'password',
  'key',
];

/**
 * A request as its log line shows it: Fastify's fields, with a `proxy` query parameter's value
 * (a render link may carry a proxy URL, with its password, before it is refused) redacted.
 */
function requestForLog(req: {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}): Record<string, unknown> {
  return {
    method: req.method,
    url: req.url?.replace(/([?&]proxy=)[^&]*/gi, '$1[redacted]'),
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

export async function buildApp(services: HttpDeps, options: BuildAppOptions = {}): Promise<App> {
  const { server } = services.config;
  const deps: RouteDeps = {
    ...services,
    apiKeyHook: apiKeyHook(services.ctx),
    rateLimits: new RateLimits(services.ctx),
    sessionCookie: sessionCookiePolicy(server.publicUrl, server.dashboardOrigins),
    dashboardOrigins: new Set([...server.dashboardOrigins, server.publicUrl.origin]),
  };
  const fastifyOptions: FastifyServerOptions = {
    logger: {
      level: server.logLevel,
      redact: { paths: LOG_REDACT, censor: '[redacted]' },
      serializers: { req: requestForLog },
      ...(options.logStream ? { stream: options.logStream } : {}),
    },
    bodyLimit: server.bodyLimitBytes,
    keepAliveTimeout: server.keepAliveTimeoutMs,
    requestTimeout: BOUNDS.http.requestTimeoutMs,
    trustProxy: server.trustProxy === false ? false : server.trustProxy,
    // Honour a well-formed incoming id so callers can correlate; mint one otherwise.
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    // Our own refusal below instead of Fastify's, whose body has no `code` and no Retry-After.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    ajv: { customOptions: { coerceTypes: false } },
    schemaController: { compilersFactory: { buildSerializer } },
  };
  const app = Fastify(fastifyOptions).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(validatorCompiler);
  registerJsonParser(app);
  app.addSchema(ErrorBody);
  app.decorateRequest('apiKey', null);
  app.decorateRequest('account', null);

  // Infrastructure.
  // From SIGTERM on (app.close()), every request that still reaches the node (on a kept-alive
  // connection, or before the listener closed) is refused like any overload, with the
  // connection closed, so that the client or the load balancer goes to another node.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (draining) {
      throw new AppError('overloaded', 'the service is shutting down', {
        headers: { 'Retry-After': '5' },
      });
    }
  });
  // The answers of requests in flight close their connection too: the server's close waits
  // for every connection, and a kept-alive one would hold it until its idle timeout.
  app.addHook('onSend', async (_request, reply) => {
    if (draining) reply.header('Connection', 'close');
  });
  registerErrorHandling(app);
  registerMethodNotAllowed(app);
  registerMetrics(app, deps.metrics, { token: server.metricsToken });
  await app.register(cookie);
  await registerCors(app, server.dashboardOrigins);
  await registerDocs(app, server.publicUrl.origin);
  await registerDocsSite(app);

  // Routes (src/http/routes/, by resource).
  registerRoutes(app, deps);

  // The landing page and dashboard (web/dist), on paths no API route uses.
  await registerWeb(app, {
    apiOrigin: server.publicUrl.origin,
    ...(options.webDistDir ? { distDir: options.webDistDir } : {}),
  });

  return app;
}

/**
 * JSON 404 for unknown paths and 405 (with `Allow`) for known paths asked with another
 * method. Fastify itself answers both with 404, so the known routes are recorded here.
 */
function registerMethodNotAllowed(app: App): void {
  const routes: Array<{ pattern: RegExp; methods: Set<string> }> = [];
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return;
    const source = route.url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    const pattern = new RegExp(`^${source}/?$`);
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const existing = routes.find((r) => r.pattern.source === pattern.source);
    if (existing) for (const m of methods) existing.methods.add(m);
    else routes.push({ pattern, methods: new Set(methods) });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '/';
    const allowed = routes.find((r) => r.pattern.test(path));
    if (allowed) {
      const methods = [...allowed.methods].filter((m) => m !== 'HEAD').sort();
      reply.header('Allow', methods.join(', '));
      return sendAppError(
        reply,
        new AppError('method_not_allowed', `method ${request.method} is not allowed on ${path}`),
      );
    }
    return sendAppError(reply, new AppError('not_found', `no route for ${request.method} ${path}`));
  });
}

/**
 * JSON bodies: an empty body counts as `{}` (so `POST /v1/keys` works with no body and a
 * capture without one says "url is required"), and prototype-poisoning keys are refused.
 */
function registerJsonParser(app: App): void {
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body);
    if (text.trim() === '') return done(null, {});
    try {
      // The reviver is slow; only a body that mentions a poisoning key pays for it.
      const suspicious = text.includes('__proto__') || text.includes('constructor');
      done(
        null,
        suspicious
          ? JSON.parse(text, (key, value) => {
              if (key === '__proto__' || key === 'constructor') {
                throw new AppError('invalid_request', `forbidden key "${key}" in JSON body`);
              }
              return value;
            })
          : JSON.parse(text),
      );
    } catch (err) {
      done(
        err instanceof AppError ? err : new AppError('invalid_request', 'body is not valid JSON'),
        undefined,
      );
    }
  });
  // A request without a body validates as an empty object.
  app.addHook('preValidation', async (request) => {
    if (request.body === undefined && request.routeOptions.schema?.body) request.body = {};
  });
}
