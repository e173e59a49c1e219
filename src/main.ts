import type { FastifyBaseLogger } from 'fastify';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config/config.ts';
import { buildDeps } from './deps.ts';
import { PlansFileError } from './domain/plans.ts';
import { startBackgroundJobs } from './jobs.ts';

/** load config -> build dependencies -> build app -> start the jobs -> listen; graceful shutdown. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }

  // The dependencies log through the app's logger once it exists.
  let log: FastifyBaseLogger | undefined;
  const logger = {
    info: (obj: object, msg: string) => log?.info(obj, msg),
    warn: (obj: object, msg: string) => log?.warn(obj, msg),
    error: (obj: object, msg: string) => log?.error(obj, msg),
  };
  let deps: Awaited<ReturnType<typeof buildDeps>>;
  try {
    deps = await buildDeps(config, { logger });
  } catch (err) {
    if (err instanceof PlansFileError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }

  const app = await buildApp(deps);
  log = app.log;
  const jobs = startBackgroundJobs(
    { sweep: deps.sweep, settleBilling: deps.billing.settle },
    { sweepIntervalMs: config.data.sweepIntervalMs, logger },
  );
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: draining HTTP, then the browser pool, then storage');
    const force = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.server.shutdownTimeoutMs);
    force.unref();
    try {
      await app.close();
      jobs.stop();
      await deps.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.server.port, host: config.server.host });
  // Launch the browser now, not on the first capture. A failure is logged by the renderer,
  // reported by /readyz and retried in the background; captures meanwhile answer 503.
  deps.renderer.warm().catch(() => {});
  app.log.info(
    {
      public_url: config.server.publicUrl.origin,
      database: deps.database.dialect,
      storage: deps.storage.kind,
    },
    `ready: docs at ${config.server.publicUrl.origin}/docs`,
  );
}

main().catch((err) => {
  process.stderr.write(
    `fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
