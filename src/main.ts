import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError, loadConfig } from './config/config.ts';
import type { AppDeps } from './deps.ts';
import type { Logger } from './lib/logger.ts';

/**
 * load config -> start Chromium -> load the rest -> build dependencies -> build app -> start
 * the maintenance timers -> listen; graceful shutdown.
 *
 * Chromium's start is asked for first; its launch goes on as soon as module loading leaves the
 * event loop free, and the browser boots while the database is migrated and the app built
 * (docs/deployment.md, "Start-up"). /readyz answers 503 until the browser is up. The modules'
 * compiled code (type stripping included) is cached under DATA_DIR for the next start.
 */
type Level = 'debug' | 'info' | 'warn' | 'error';
/**
 * After the shutdown grace, what closing the browser pool, storage and the database may take
 * before the process is ended regardless (exit 1).
 */
const SHUTDOWN_CLEANUP_MS = 15_000;
/** Log lines kept from before the app's logger exists. */
const MAX_EARLY_LOG_LINES = 100;

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

  // Ours alone (a cache anyone could write to could inject code): under DATA_DIR.
  enableCompileCache(join(config.data.dir, 'cache', 'node'));
  const { buildBrowser } = await import('./browser-deps.ts');

  // The dependencies log through the app's logger once it exists; what they say before (the
  // browser starts first) is kept until then.
  let log: FastifyBaseLogger | undefined;
  const early: Array<[Level, object, string]> = [];
  const write = (level: Level) => (obj: object, msg: string) => {
    if (log) log[level](obj, msg);
    else if (early.length < MAX_EARLY_LOG_LINES) early.push([level, obj, msg]);
  };
  const logger: Logger = {
    debug: write('debug'),
    info: write('info'),
    warn: write('warn'),
    error: write('error'),
  };
  if (process.getuid?.() === 0) {
    // Chromium will not sandbox its renderers for root (adapters/browser/process/
    // chromium-flags.ts): a renderer exploit would then run as root beside this process, its
    // environment and its files. Said in every environment: `npm start` as root is the same
    // browser. The supervisor says it again once it has read the renderers' own state.
    logger.warn(
      { uid: 0 },
      "running as root: Chromium's renderers run without their sandbox; run the service as an unprivileged user (docs/security.md)",
    );
  }
  let deps: AppDeps | undefined;
  const browser = buildBrowser(config, {
    onRefused: () => deps?.metrics.refused('ssrf'),
    logger,
  });
  // A failure is logged by the renderer, reported by /readyz and retried in the background;
  // captures meanwhile answer 503.
  browser.renderer.warm().catch(() => {});
  const [{ buildApp }, { buildDeps }, { PlansFileError }, { startMaintenance }] = await Promise.all(
    [
      import('./app.ts'),
      import('./deps.ts'),
      import('./domain/plans.ts'),
      import('./maintenance.ts'),
    ],
  );
  try {
    deps = await buildDeps(config, { logger, browser });
  } catch (err) {
    await browser.renderer.close().catch(() => {});
    if (err instanceof PlansFileError) {
      // What was said before the logger existed is not lost with the boot.
      for (const [level, obj, msg] of early) {
        process.stderr.write(`${JSON.stringify({ level, ...obj, msg })}\n`);
      }
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }

  let app: Awaited<ReturnType<typeof buildApp>>;
  try {
    app = await buildApp(deps);
  } catch (err) {
    await deps.close();
    throw err;
  }
  log = app.log;
  for (const [level, obj, msg] of early.splice(0)) app.log[level](obj, msg);
  const maintenance = startMaintenance(
    {
      sweep: deps.sweep,
      settleBilling: deps.billing.settle,
      returnHolds: deps.returnHolds,
      sweepOrphans: deps.sweepOrphans,
      runMonitors: deps.runMonitors,
    },
    {
      sweepIntervalMs: config.data.sweepIntervalMs,
      holdSweepMs: config.quota.holdLeaseMs / 4,
      orphanSweepMs: config.data.orphanMinAgeMs / 2,
      logger,
    },
  );
  let stopping = false;
  /**
   * SIGTERM (docs/deployment.md, "Shutdown"): new requests are refused (503 overloaded,
   * Retry-After) while the ones in flight finish; job workers and the webhook deliverer take
   * nothing more and let go of deliveries being sent; captures still running when the grace
   * ends are cut off (503, their units given back), and jobs cut off go back to the queue at
   * once. Then the browser pool (its processes, profile and temp directory), storage and the
   * database close, and the process exits 0.
   */
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    const graceMs = config.server.shutdownGraceMs;
    app.log.info({ signal, grace_ms: graceMs }, 'shutting down: draining HTTP and jobs');
    // Only a close that hangs past the grace and the cleanup ends the process this way.
    const force = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, graceMs + SHUTDOWN_CLEANUP_MS);
    force.unref();
    const cutOff = setTimeout(() => {
      app.log.warn('shutdown grace over: cutting off the captures still running');
      void deps.renderer.close();
    }, graceMs);
    try {
      maintenance.stop();
      const draining = app.close();
      await deps.stopTakingWork();
      await draining;
      // Jobs still rendering are waited for here, under the same grace.
      await deps.close();
      clearTimeout(cutOff);
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  await app.listen({ port: config.server.port, host: config.server.host });
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
