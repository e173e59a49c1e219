import { Type } from 'typebox';
import type { App, RouteDeps } from '../../types.ts';

const Health = Type.Object({
  status: Type.String({ enum: ['ok', 'unavailable'] }),
  checks: Type.Optional(Type.Record(Type.String(), Type.String())),
});

export function registerHealth(app: App, deps: RouteDeps): void {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: 200 while the process runs',
        response: { 200: Health },
      },
    },
    async () => ({ status: 'ok' }),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: 200 only when every dependency is usable',
        response: { 200: Health, 503: Health },
      },
    },
    async (request, reply) => {
      const checks: Record<string, string> = {};
      let ok = true;
      await Promise.all(
        deps.readiness.map(async ({ name, check }) => {
          try {
            await withTimeout(check(), 3_000);
            checks[name] = 'ok';
          } catch (err) {
            ok = false;
            // The reason goes to the log, not to whoever asks (no internals in 5xx bodies).
            checks[name] = 'unavailable';
            request.log.warn({ err, check: name }, 'readiness check failed');
          }
        }),
      );
      reply.header('Cache-Control', 'no-store');
      return reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks });
    },
  );
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
