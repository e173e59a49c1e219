/**
 * The composition root: the list of the node's parts (src/parts/, ARCHITECTURE.md, "Parts"),
 * built in order, each from its config section and what the parts before it give. Their
 * readiness checks, stop-taking-work and closes are collected as they are built (PartList).
 * No behaviour lives here: each part's is in its factory, the timers in maintenance.ts, the
 * HTTP hooks in app.ts.
 */

import type { LazyRenderer } from './adapters/browser/index.ts';
import type { DatabaseHandle } from './adapters/db/connect.ts';
import type { Resolver } from './adapters/egress/resolver.ts';
import { workerName } from './adapters/jobs/db-queue.ts';
import { Metrics } from './adapters/metrics/metrics.ts';
import type { BrowserDeps } from './browser-deps.ts';
import type { Config } from './config/config.ts';
import { loadPlans } from './config/plans-file.ts';
import { BOUNDS } from './domain/bounds.ts';
import { setPasswordCost } from './domain/passwords.ts';
import type { HttpDeps } from './http/types.ts';
import type { Logger } from './lib/logger.ts';
import { type Clock, systemClock } from './lib/time.ts';
import { billingPart } from './parts/billing.ts';
import { browserPart } from './parts/browser.ts';
import { captureContext, demoContext, domainContext } from './parts/contexts.ts';
import { databasePart } from './parts/database.ts';
import { jobsPart } from './parts/jobs.ts';
import { maintenancePart } from './parts/maintenance.ts';
import { monitorRunsPart, monitorsPart } from './parts/monitors.ts';
import { PartList } from './parts/part.ts';
import { redisPart } from './parts/redis.ts';
import { sharedStatePart } from './parts/shared-state.ts';
import { storagePart } from './parts/storage.ts';
import { webhooksPart } from './parts/webhooks.ts';

/**
 * Everything the app, the CLI, the maintenance timers and the tests are given, chosen from
 * config here.
 */
export interface AppDeps extends HttpDeps {
  metrics: Metrics;
  database: DatabaseHandle;
  renderer: LazyRenderer;
  /** One retention sweep now (main.ts also runs it on a timer, maintenance.ts). */
  sweep(): Promise<number>;
  /**
   * Gives back the units of expired quota holds now (main.ts also on a timer,
   * maintenance.ts).
   */
  returnHolds(): Promise<number>;
  /** Deletes stored images no record points to now (main.ts also on a timer, maintenance.ts). */
  sweepOrphans(): Promise<number>;
  /**
   * Runs the monitors due now, each slot once across nodes, and resolves when their runs
   * have ended (main.ts also on a timer, maintenance.ts); how many ran.
   */
  runMonitors(): Promise<number>;
  billing: HttpDeps['billing'] & {
    /** Billing housekeeping now (main.ts also runs it every minute, maintenance.ts). */
    settle(): Promise<number>;
  };
  /**
   * Shutdown's first step (main.ts): this node's job workers and webhook deliverer take no
   * more work, deliveries being sent are let go at once for another node, and a job the
   * renderer cuts off from now on goes back to the queue at once. Jobs rendering go on.
   */
  stopTakingWork(): Promise<void>;
  /** Closes what buildDeps opened, in reverse order. */
  close(): Promise<void>;
}

export interface BuildDepsOptions {
  clock?: Clock;
  /** PostgreSQL schema (tests give each run its own). */
  databaseSchema?: string;
  /** Launch the browser now instead of on the first capture. */
  eagerBrowser?: boolean;
  /**
   * The renderer and guard, already built (and maybe starting) by main.ts before it loaded
   * the rest of the service; buildDeps builds them itself otherwise.
   */
  browser?: BrowserDeps;
  /** Name resolution for the egress checks (tests: slow, dead or local names, no real DNS). */
  resolver?: Resolver;
  /**
   * The machine's own interface addresses, refused like loopback unless allowlisted.
   * Default: os.networkInterfaces(), re-read every few seconds.
   */
  interfaceAddresses?: () => Iterable<string>;
  /** Where the service's parts log (main.ts: the boot log, then the app's). */
  logger: Logger;
  /** Waits between webhook delivery attempts (default BOUNDS.jobs.webhookBackoffMs). */
  webhookBackoffMs?: readonly number[];
}

export async function buildDeps(config: Config, options: BuildDepsOptions): Promise<AppDeps> {
  const clock = options.clock ?? systemClock;
  const { logger } = options;
  setPasswordCost(config.server.passwordHashCost);
  const plans = await loadPlans(config.plansFile);
  const schema = options.databaseSchema ?? config.data.databaseSchema;
  const parts = new PartList();
  try {
    const { database, store, secrets } = parts.add(
      await databasePart({ config: config.data, schema, serverSecret: config.serverSecret, clock }),
    );
    const storage = parts.add(await storagePart({ config: config.storage, secrets, schema }));
    const redis = parts.add(await redisPart({ config, logger }));
    const shared = parts.add(await sharedStatePart({ config, redis, database, schema, logger }));
    const ctx = domainContext({ config: config.quota, store, clock, plans, secrets, shared });
    const metrics = new Metrics();
    const browser = parts.add(
      await browserPart({
        config,
        given: options.browser,
        egress: { resolver: options.resolver, interfaceAddresses: options.interfaceAddresses },
        metrics,
        eager: options.eagerBrowser ?? false,
        logger,
      }),
    );
    const capture = captureContext({ config, ctx, browser, storage, shared });
    // Monitor runs are jobs: their ends are built first, for the workers to tell.
    const { comparer, runEnds } = parts.add(monitorRunsPart({ capture, logger }));
    // One name for this node's leases, on jobs and webhook deliveries alike.
    const owner = workerName();
    const webhooks = parts.add(
      webhooksPart({
        config: config.jobs,
        ctx: capture,
        owner,
        policy: browser.webhookPolicy,
        backoffMs: options.webhookBackoffMs ?? BOUNDS.jobs.webhookBackoffMs,
        logger,
      }),
    );
    const jobs = parts.add(
      await jobsPart({ config, capture, runEnds, owner, jobEnded: webhooks.wake, logger }),
    );
    const billing = parts.add(await billingPart({ config, ctx, database, logger }));
    const monitors = parts.add(monitorsPart({ capture, comparer, jobs: jobs.jobs, logger }));
    const chores = parts.add(
      maintenancePart({ config: config.data, ctx, storage, database, shared, metrics, logger }),
    );
    return {
      config,
      ctx,
      database,
      storage,
      capture,
      jobs,
      demo: demoContext(capture),
      monitors: monitors.ctx,
      runMonitors: monitors.runDue,
      renderer: browser.renderer,
      metrics,
      ...chores,
      billing,
      readiness: parts.readiness(),
      stopTakingWork: () => parts.stopTaking(),
      close: () => parts.close(),
    };
  } catch (err) {
    await parts.close();
    throw err;
  }
}
