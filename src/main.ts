import { enableCompileCache } from 'node:module';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { type Config, ConfigError, loadConfig } from './config/config.ts';
import type { AppDeps } from './deps.ts';
import type { App } from './http/types.ts';
import type { Logger } from './lib/logger.ts';
import type { Maintenance } from './maintenance.ts';

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
  const config = readConfig();
  // Ours alone (a cache anyone could write to could inject code): under DATA_DIR.
  enableCompileCache(join(config.data.dir, 'cache', 'node'));
  const { buildBrowser } = await import('./browser-deps.ts');

  const boot = new BootLog();
  warnIfRoot(boot.logger);
  let deps: AppDeps | undefined;
  const browser = buildBrowser(config, {
    onRefused: () => deps?.metrics.refused('ssrf'),
    logger: boot.logger,
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
    deps = await buildDeps(config, { logger: boot.logger, browser });
  } catch (err) {
    await browser.renderer.close().catch(() => {});
    if (err instanceof PlansFileError) {
      // What was said before the logger existed is not lost with the boot.
      boot.dump();
      process.stderr.write(`${err.message}\n`);
      process.exit(78);
    }
    throw err;
  }

  let app: App;
  try {
    app = await buildApp(deps);
  } catch (err) {
    await deps.close();
    throw err;
  }
  boot.attach(app.log);
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
      logger: boot.logger,
    },
  );
  shutDownOnSignals({ app, deps, maintenance, graceMs: config.server.shutdownGraceMs });

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

/** The configuration, or the list of its problems on stderr and exit 78 (EX_CONFIG). */
function readConfig(): Config {
  try {
    return loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}

/**
 * The logger of the boot: the dependencies log through the app's logger once it exists; what
 * they say before (the browser starts first) is kept until then.
 */
class BootLog {
  readonly logger: Logger;
  #log: FastifyBaseLogger | undefined;
  readonly #early: Array<[Level, object, string]> = [];

  constructor() {
    const write = (level: Level) => (obj: object, msg: string) => {
      if (this.#log) this.#log[level](obj, msg);
      else if (this.#early.length < MAX_EARLY_LOG_LINES) this.#early.push([level, obj, msg]);
    };
    this.logger = {
      debug: write('debug'),
      info: write('info'),
      warn: write('warn'),
      error: write('error'),
    };
  }

  /** From now on lines go to the app's logger, the kept ones first. */
  attach(log: FastifyBaseLogger): void {
    this.#log = log;
    for (const [level, obj, msg] of this.#early.splice(0)) log[level](obj, msg);
  }

  /** The kept lines to stderr, for a boot that ends before the app's logger exists. */
  dump(): void {
    for (const [level, obj, msg] of this.#early) {
      process.stderr.write(`${JSON.stringify({ level, ...obj, msg })}\n`);
    }
  }
}

function warnIfRoot(logger: Logger): void {
  if (process.getuid?.() !== 0) return;
  // Chromium will not sandbox its renderers for root (adapters/browser/process/
  // chromium-flags.ts): a renderer exploit would then run as root beside this process, its
  // environment and its files. Said in every environment: `npm start` as root is the same
  // browser. The supervisor says it again once it has read the renderers' own state.
  logger.warn(
    { uid: 0 },
    "running as root: Chromium's renderers run without their sandbox; run the service as an unprivileged user (docs/security.md)",
  );
}

/**
 * SIGTERM (docs/deployment.md, "Shutdown"): new requests are refused (503 overloaded,
 * Retry-After) while the ones in flight finish; job workers and the webhook deliverer take
 * nothing more and let go of deliveries being sent; captures still running when the grace
 * ends are cut off (503, their units given back), and jobs cut off go back to the queue at
 * once. Then the browser pool (its processes, profile and temp directory), storage and the
 * database close, and the process exits 0.
 */
function shutDownOnSignals(running: {
  app: App;
  deps: AppDeps;
  maintenance: Maintenance;
  graceMs: number;
}): void {
  const { app, deps, maintenance, graceMs } = running;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
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
}

main().catch((err) => {
  process.stderr.write(
    `fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
