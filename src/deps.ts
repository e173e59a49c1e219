/**
 * The composition root: picks an implementation of every port from config and connects
 * them. No behaviour lives here (the egress checks are adapters/egress/guard.ts, the
 * renderer adapters/browser/index.ts, the timers maintenance.ts, the HTTP hooks
 * app.ts).
 */
import { sql } from 'kysely';
import { migrateToLatest } from '../migrations/index.ts';
import { createLocalBilling, type LocalBilling } from './adapters/billing/local-provider.ts';
import type { LazyRenderer } from './adapters/browser/index.ts';
import { createImageComparer } from './adapters/compare/pixel-compare.ts';
import { connectDatabase, type DatabaseHandle } from './adapters/db/connect.ts';
import { createExclusiveRunner } from './adapters/db/exclusive.ts';
import { createKyselyStore } from './adapters/db/kysely-store.ts';
import { createLocalBillingStore } from './adapters/db/local-billing-store.ts';
import { loadServerSecret } from './adapters/db/server-secret.ts';
import type { EgressPolicy } from './adapters/egress/policy.ts';
import type { Resolver } from './adapters/egress/resolver.ts';
import { createMemoryRevocations } from './adapters/events/memory-revocations.ts';
import { createPostgresRevocations } from './adapters/events/postgres-revocations.ts';
import { createRedisRevocations } from './adapters/events/redis-revocations.ts';
import { createDbJobQueue, workerName } from './adapters/jobs/db-queue.ts';
import { startPump } from './adapters/jobs/pump.ts';
import { createMemoryCounters } from './adapters/limits/memory.ts';
import { createPostgresCounters, type PrunableCounters } from './adapters/limits/postgres.ts';
import { createRedisCounters } from './adapters/limits/redis.ts';
import { createMemoryRenderLocks } from './adapters/locks/memory.ts';
import { createRedisRenderLocks } from './adapters/locks/redis.ts';
import { Metrics } from './adapters/metrics/metrics.ts';
import type { RedisClients } from './adapters/redis/connect.ts';
import { createStorage } from './adapters/storage/index.ts';
import { createProxyWebhookSender } from './adapters/webhooks/proxy-sender.ts';
import { type BrowserDeps, buildBrowser } from './browser-deps.ts';
import type { Config } from './config/config.ts';
import { loadPlans } from './config/plans-file.ts';
import type { BillingContext, BillingProvider } from './domain/billing/ports.ts';
import { receiveWebhook } from './domain/billing/receive-webhook.ts';
import { BOUNDS } from './domain/bounds.ts';
import { credentialDigest } from './domain/captures/capture-options.ts';
import type { CaptureContext, FlightResult, RenderLocks } from './domain/captures/ports.ts';
import { RequestResolutions } from './domain/captures/request-resolutions.ts';
import type { DomainContext } from './domain/context.ts';
import { attemptDelivery, DELIVERY_LEASE_MS } from './domain/jobs/deliver-webhooks.ts';
import type { JobContext, MonitorRunEnds } from './domain/jobs/ports.ts';
import { runJob } from './domain/jobs/run-job.ts';
import type { CounterFactory } from './domain/limits.ts';
import type { MonitorContext } from './domain/monitors/ports.ts';
import { runDueMonitors } from './domain/monitors/run-due-monitors.ts';
import { monitorRunEnds } from './domain/monitors/run-monitor.ts';
import { setPasswordCost } from './domain/passwords.ts';
import { demoAllowance } from './domain/plans.ts';
import { QuotaHolds, returnExpiredHolds } from './domain/quota/quota-holds.ts';
import type { RevocationBus } from './domain/revocations.ts';
import type { CaptureJob } from './domain/store.ts';
import type { HttpDeps } from './http/types.ts';
import { ForegroundRenders } from './lib/foreground.ts';
import type { Logger } from './lib/logger.ts';
import { createSecretDeriver } from './lib/server-secret.ts';
import { SingleFlight } from './lib/single-flight.ts';
import { type Clock, MINUTE_MS, systemClock } from './lib/time.ts';
import {
  createBillingHousekeeping,
  createOrphanSweep,
  createRetentionSweep,
} from './maintenance.ts';

type Closers = Array<() => Promise<void>>;

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
  logger?: Logger;
  /** Waits between webhook delivery attempts (default BOUNDS.jobs.webhookBackoffMs). */
  webhookBackoffMs?: readonly number[];
}

export async function buildDeps(config: Config, options: BuildDepsOptions = {}): Promise<AppDeps> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  setPasswordCost(config.server.passwordHashCost);
  const plans = await loadPlans(config.plansFile);
  const closers: Closers = [];
  try {
    const schema = options.databaseSchema ?? config.data.databaseSchema;
    const database = connectDatabase({
      url: config.data.databaseUrl,
      dataDir: config.data.dir,
      ...(schema ? { schema } : {}),
    });
    closers.push(() => database.close());
    await migrateToLatest(database.db as never, database.dialect);
    // With NODE_ENV=production loadConfig has refused a boot without SERVER_SECRET.
    const serverSecret = await loadServerSecret(database.db, config.serverSecret, clock());

    // Objects this deployment writes carry a tag only it can make (server secret and
    // schema), so its orphan sweep never deletes another deployment's images in a bucket.
    const storage = await createStorage(config.storage, {
      owner: createSecretDeriver(serverSecret.secret)
        .derive('storage-owner', schema ?? '')
        .toString('hex')
        .slice(0, 32),
    });
    closers.push(() => storage.close());

    const shared = await chooseSharedState(config, database, schema, logger, closers);
    const { counters } = shared;
    const store = createKyselyStore(database.db, database.dialect, {
      direct: database.direct,
      prepared: database.prepared,
    });
    const ctx: DomainContext & { revocations: RevocationBus } = {
      store,
      clock,
      plans,
      quotaHolds: new QuotaHolds({ store: store.quota, clock, leaseMs: config.quota.holdLeaseMs }),
      counters,
      secrets: createSecretDeriver(serverSecret.secret),
      revocations: shared.revocations,
      loginThrottle: {
        byEmail: counters.create({
          name: 'login-email',
          limit: BOUNDS.account.loginFailuresPerEmail,
          windowMs: BOUNDS.account.loginWindowMs,
        }),
        byIp: counters.create({
          name: 'login-ip',
          limit: BOUNDS.account.loginFailuresPerIp,
          windowMs: BOUNDS.account.loginWindowMs,
        }),
      },
    };

    const metrics = new Metrics();
    const { guard, renderer, webhookPolicy } =
      options.browser ??
      buildBrowser(config, {
        ...(options.resolver ? { resolver: options.resolver } : {}),
        ...(options.interfaceAddresses ? { interfaceAddresses: options.interfaceAddresses } : {}),
        onRefused: () => metrics.refused('ssrf'),
        ...(logger ? { logger } : {}),
      });
    closers.push(() => renderer.close());
    metrics.watchPool(() => renderer.stats());
    if (options.eagerBrowser) await renderer.warm();

    const capture: CaptureContext = {
      ...ctx,
      renderer,
      storage,
      guard,
      resolutions: new RequestResolutions(guard, credentialDigest(ctx.secrets)),
      flights: new SingleFlight<FlightResult>(),
      renderLocks: shared.renderLocks,
      publicUrl: config.server.publicUrl.origin,
      renderTimeoutMs: config.render.timeoutMs,
      foreground: new ForegroundRenders(),
    };
    const comparer = createImageComparer();
    closers.push(() => comparer.close());
    const asyncCaptures = await buildAsyncCaptures(config, capture, {
      monitorRuns: monitorRunEnds(
        { ...capture, comparer },
        {
          onFileError: (err, key) =>
            logger?.warn(
              { err, key },
              'could not delete a monitor run image; the orphan sweep will',
            ),
        },
      ),
      webhookPolicy: options.browser?.webhookPolicy ?? webhookPolicy,
      backoffMs: options.webhookBackoffMs ?? BOUNDS.jobs.webhookBackoffMs,
      logger,
    });
    closers.push(() => asyncCaptures.close());
    const demoCounter = counters.create({
      name: 'demo',
      limit: demoAllowance(plans).perDay,
      windowMs: 24 * 60 * MINUTE_MS,
    });
    const demoRequests = counters.create({
      name: 'demo-requests',
      limit: demoAllowance(plans).perHour,
      windowMs: 60 * MINUTE_MS,
    });
    const billing = await buildBilling(config, ctx, database, logger);
    const monitors: MonitorContext = { ...capture, comparer, jobs: asyncCaptures.ctx.jobs };

    return {
      config,
      ctx,
      database,
      storage,
      capture,
      jobs: asyncCaptures.ctx,
      demo: { ...capture, demoCounter, demoRequests },
      monitors,
      runMonitors: () =>
        runDueMonitors(monitors, (err, monitor) =>
          logger?.warn({ err, monitor }, 'a monitor run could not start; it runs at its next slot'),
        ),
      renderer,
      metrics,
      sweep: createRetentionSweep({
        store: ctx.store,
        storage,
        clock,
        runExclusive: createExclusiveRunner(database),
        counters: shared.dbCounters,
        metrics,
        ...(logger ? { logger } : {}),
      }),
      returnHolds: () => returnExpiredHolds(ctx),
      sweepOrphans: createOrphanSweep({
        store: ctx.store,
        storage,
        clock,
        runExclusive: createExclusiveRunner(database),
        minAgeMs: config.data.orphanMinAgeMs,
        ...(logger ? { logger } : {}),
      }),
      billing: {
        ...billing,
        settle: createBillingHousekeeping({ store: ctx.store, clock, local: billing.local }),
      },
      readiness: [
        { name: 'database', check: () => database.ping() },
        { name: 'storage', check: () => storage.ping() },
        ...(shared.redis ? [{ name: 'redis', check: shared.redis.ping }] : []),
        {
          name: 'browser',
          check: async () => {
            if (!renderer.ready()) throw new Error('browser pool is restarting');
          },
        },
      ],
      stopTakingWork: () => asyncCaptures.stop(),
      close: async () => {
        for (const close of closers.reverse()) await close().catch(() => {});
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }
}

/**
 * What nodes share (ARCHITECTURE.md, scale-out): with Redis, limits, revocations and render
 * locks go through it; on PostgreSQL without Redis the counters live in the database, so
 * limits stay exact on any number of nodes, and revocations travel over LISTEN/NOTIFY; the
 * embedded mode (SQLite, one node by construction) keeps all three in process.
 */
async function chooseSharedState(
  config: Config,
  database: DatabaseHandle,
  schema: string | undefined,
  logger: Logger | undefined,
  closers: Closers,
): Promise<{
  redis: RedisClients | null;
  counters: CounterFactory;
  /** The counters when they live in the database (the sweep prunes them). */
  dbCounters: PrunableCounters | null;
  revocations: RevocationBus;
  renderLocks: RenderLocks;
}> {
  const prefix = config.redisPrefix;
  let redis: RedisClients | null = null;
  if (config.redisUrl) {
    // Loaded only when configured (ioredis and its dependencies take a while to load).
    const { connectRedis } = await import('./adapters/redis/connect.ts');
    const clients = connectRedis(config.redisUrl);
    redis = clients;
    closers.push(() => clients.close());
    if (!(await clients.ready(5_000))) {
      logger?.warn({}, 'Redis is not reachable yet; limits answer 503 until it is');
    }
  }
  const dbCounters =
    !redis && database.dialect === 'postgres' ? createPostgresCounters(database.db) : null;
  // Revocations reach every node: over Redis, else PostgreSQL LISTEN/NOTIFY; the in-process
  // bus only serves SQLite, which is one node by construction.
  const listenBus =
    !redis && database.dialect === 'postgres' && config.data.databaseUrl
      ? createPostgresRevocations({
          url: config.data.databaseUrl,
          schema,
          notify: async (channel, payload) => {
            await sql`select pg_notify(${channel}, ${payload})`.execute(database.db);
          },
          ...(logger ? { logger } : {}),
        })
      : null;
  if (listenBus && !(await listenBus.ready(5_000))) {
    logger?.warn({}, 'revocation LISTEN not in place yet; it keeps trying');
  }
  const revocations: RevocationBus = redis
    ? createRedisRevocations(redis.commands, redis.subscriber, prefix)
    : (listenBus ?? createMemoryRevocations());
  closers.push(() => revocations.close());
  return {
    redis,
    counters: redis
      ? createRedisCounters(redis.commands, prefix)
      : (dbCounters ?? createMemoryCounters()),
    dbCounters,
    revocations,
    renderLocks: redis ? createRedisRenderLocks(redis.commands, prefix) : createMemoryRenderLocks(),
  };
}

/** The payment provider config names: Stripe, or the built-in local one. */
async function buildBilling(
  config: Config,
  ctx: DomainContext,
  database: DatabaseHandle,
  logger: Logger | undefined,
): Promise<{ ctx: BillingContext; local: LocalBilling | null }> {
  const dashboard = config.server.dashboardOrigins[0] ?? config.server.publicUrl.origin;
  const returnUrls = {
    success: `${dashboard}/dashboard?billing=success`,
    cancel: `${dashboard}/dashboard?billing=cancel`,
    portal: `${dashboard}/dashboard`,
  };
  const settings = config.billing;
  let local: LocalBilling | null = null;
  let provider: BillingProvider;
  if (settings.provider === 'stripe') {
    // Loaded only when configured (the Stripe SDK is a slow import).
    const { createStripeBilling } = await import('./adapters/billing/stripe-provider.ts');
    provider = createStripeBilling({
      secretKey: settings.secretKey,
      webhookSecrets: settings.webhookSecrets,
      priceId: settings.priceId,
      apiBase: settings.apiBase,
    });
  } else {
    local = createLocalBilling({
      store: createLocalBillingStore(database.db, database.dialect),
      clock: ctx.clock,
      publicUrl: config.server.publicUrl.origin,
      priceCents: ctx.plans.pro.price_cents,
      // The same path as a Stripe delivery: signature check, then the event applied once.
      deliver: async (payload, signature) => {
        const { event, outcome } = await receiveWebhook(billingCtx, { payload, signature });
        logger?.info(
          { event_id: event.id, event_type: event.type, outcome },
          'billing event (local provider)',
        );
      },
    });
    provider = local;
  }
  const billingCtx: BillingContext = { ...ctx, billing: provider, returnUrls };
  return { ctx: billingCtx, local };
}

/**
 * Async captures and their webhooks (docs/deployment.md, "Async captures"): the job queue
 * (the database's own), this node's workers and the webhook deliverer. Workers and deliverer
 * run on every node with ASYNC_WORKERS above 0.
 */
async function buildAsyncCaptures(
  config: Config,
  capture: CaptureContext,
  options: {
    monitorRuns: MonitorRunEnds;
    webhookPolicy: EgressPolicy;
    backoffMs: readonly number[];
    logger: Logger | undefined;
  },
): Promise<{ ctx: JobContext; stop(): Promise<void>; close(): Promise<void> }> {
  const owner = workerName();
  const stopping = new AbortController();
  const leaseMs = config.jobs.leaseMs;
  const sender = createProxyWebhookSender(options.webhookPolicy);
  const deliveryOptions = { owner, backoffMs: options.backoffMs, batch: 1 };
  const deliverer = startPump({
    name: 'webhooks',
    concurrency: config.jobs.workers > 0 ? WEBHOOK_SENDS_AT_ONCE : 0,
    pollMs: BOUNDS.jobs.pollIntervalMs,
    take: async () =>
      (
        await capture.store.webhooks.claimDue(
          owner,
          capture.clock(),
          DELIVERY_LEASE_MS,
          1,
          BOUNDS.jobs.deliveriesInFlightPerAccount,
        )
      )[0] ?? null,
    run: (delivery, stop) => attemptDelivery(capture, sender, delivery, deliveryOptions, stop),
    release: async (delivery) => {
      await capture.store.webhooks.release(delivery.id, owner);
    },
    logger: options.logger,
  });
  let ctx: JobContext;
  // A finished job may have a webhook to send: look now rather than at the next tick.
  const run = (job: CaptureJob) =>
    runJob(ctx, job, { owner, leaseMs, stopping: stopping.signal }).finally(() => deliverer.wake());
  const { store, clock } = capture;
  // BullMQ (and ioredis) are loaded only with Redis configured.
  const queue = config.redisUrl
    ? (await import('./adapters/jobs/bullmq-queue.ts')).createBullMqJobQueue({
        redisUrl: config.redisUrl,
        prefix: config.redisPrefix,
        concurrency: config.jobs.workers,
        leaseMs,
        claim: (id) => store.jobs.claim(owner, clock(), leaseMs, id),
        status: (id) => store.jobs.status(id),
        run,
        stranded: () => store.jobs.stranded(clock(), clock() - leaseMs, 100),
        sweepIntervalMs: BOUNDS.jobs.strandedSweepMs,
        logger: options.logger,
      })
    : createDbJobQueue({
        concurrency: config.jobs.workers,
        pollMs: BOUNDS.jobs.pollIntervalMs,
        claim: () => store.jobs.claim(owner, clock(), leaseMs),
        run,
        release: (job) => store.jobs.release(job.id, owner, clock(), false),
        ...(options.logger ? { logger: options.logger } : {}),
      });
  ctx = { ...capture, jobs: queue, monitorRuns: options.monitorRuns };
  return {
    ctx,
    stop: async () => {
      stopping.abort();
      // No more jobs taken; those rendering go on (the close below waits for them).
      void queue.close().catch(() => {});
      await deliverer.close({ abandon: true });
    },
    close: async () => {
      await queue.close();
      await deliverer.close();
      await sender.close();
    },
  };
}

/** Webhook deliveries in flight at once on a node. */
const WEBHOOK_SENDS_AT_ONCE = 8;
