import { readFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { migrateToLatest } from '../migrations/index.ts';
import { createLocalBilling, type LocalBilling } from './adapters/billing/local-provider.ts';
import type { BillingProvider } from './adapters/billing/provider.ts';
import { createStripeBilling } from './adapters/billing/stripe-provider.ts';
import { createChromiumRenderer } from './adapters/browser/chromium-renderer.ts';
import { DNS_LIMITS, DnsCache, LookupBound } from './adapters/browser/egress/dns-cache.ts';
import { addressSet, type EgressPolicy, parseAllowlist } from './adapters/browser/egress/policy.ts';
import { startEgressProxy } from './adapters/browser/egress/proxy.ts';
import { type Resolver, systemResolver } from './adapters/browser/egress/resolver.ts';
import {
  checkTargetUrl,
  parseTargetUrl,
  screenTargetUrl,
} from './adapters/browser/egress/url-check.ts';
import { lazyRenderer } from './adapters/browser/lazy-renderer.ts';
import { createLocalBillingStore } from './adapters/db/billing-store.ts';
import { connectDatabase, type DatabaseHandle } from './adapters/db/connect.ts';
import { exclusiveRunner } from './adapters/db/exclusive.ts';
import { createKyselyStore } from './adapters/db/kysely-store.ts';
import { memoryRevocations } from './adapters/events/memory-revocations.ts';
import { postgresRevocations } from './adapters/events/postgres-revocations.ts';
import { redisRevocations } from './adapters/events/redis-revocations.ts';
import { memoryCounters } from './adapters/limits/memory.ts';
import { postgresCounters } from './adapters/limits/postgres.ts';
import { redisCounters } from './adapters/limits/redis.ts';
import { localRenderLocks } from './adapters/locks/local.ts';
import { redisRenderLocks } from './adapters/locks/redis.ts';
import { Metrics } from './adapters/metrics/metrics.ts';
import { connectRedis, type RedisClients } from './adapters/redis/connect.ts';
import { createStorage } from './adapters/storage/index.ts';
import type { ImageStorage } from './adapters/storage/storage.ts';
import type { Config } from './config/config.ts';
import { BILLING_LIMITS, type BillingContext } from './domain/billing/ports.ts';
import { receiveWebhook } from './domain/billing/receive-webhook.ts';
import type { CaptureContext, FlightResult, RenderLocks } from './domain/captures/ports.ts';
import { sweepExpired } from './domain/captures/sweep-expired.ts';
import { ACCOUNT_LIMITS, type DomainContext } from './domain/context.ts';
import type { CounterFactory, WindowCounter } from './domain/limits.ts';
import { setPasswordCost } from './domain/passwords.ts';
import {
  applyPlanOverrides,
  DEFAULT_PLANS,
  PlansFileError,
  type PlanTable,
} from './domain/plans.ts';
import type { RevocationBus } from './domain/revocations.ts';
import { apiKeyHook } from './http/auth.ts';
import { type SessionCookiePolicy, sessionCookiePolicy } from './http/cookie-policy.ts';
import { RateLimits } from './http/rate-limit.ts';
import { SingleFlight } from './lib/single-flight.ts';
import { type Clock, MINUTE_MS, systemClock } from './lib/time.ts';

export interface AppContext extends DomainContext {
  revocations: RevocationBus;
}

/** Everything the HTTP layer needs, chosen from config in this one place. */
export interface AppDeps {
  config: Config;
  ctx: AppContext;
  database: DatabaseHandle;
  storage: ImageStorage;
  capture: CaptureContext;
  demo: CaptureContext & { demoCounter: WindowCounter; demoRequests: WindowCounter };
  renderer: ReturnType<typeof lazyRenderer>;
  egressPolicy: EgressPolicy;
  rateLimits: RateLimits;
  metrics: Metrics;
  apiKeyHook: ReturnType<typeof apiKeyHook>;
  /** Runs one retention sweep now (also run every minute while the app lives). */
  sweep(): Promise<number>;
  billing: {
    ctx: BillingContext;
    /** The built-in test provider when it is the one in use (its pages are served then). */
    local: LocalBilling | null;
    /**
     * Billing housekeeping, now (also every minute while the app lives): the local
     * provider's renewals and period ends, and forgetting old event ids.
     */
    settle(): Promise<number>;
  };
  dashboardOrigins: ReadonlySet<string>;
  secureCookies: boolean;
  /** The session cookie's SameSite and Secure flags (http/cookie-policy.ts). */
  sessionCookie: SessionCookiePolicy;
  readiness: Array<{ name: string; check: () => Promise<void> }>;
  /** Closes what buildDeps opened, in reverse order. */
  close(): Promise<void>;
}

export interface BuildDepsOptions {
  clock?: Clock;
  /** PostgreSQL schema (tests give each run its own). */
  databaseSchema?: string;
  /** Launch the browser now instead of on the first capture (the server does). */
  eagerBrowser?: boolean;
  /** Run the retention sweeper every minute (default true). */
  sweeper?: boolean;
  /** Name resolution for the egress checks (tests: slow, dead or local names, no real DNS). */
  resolver?: Resolver;
  /**
   * The machine's own interface addresses, refused like loopback unless allowlisted.
   * Default: os.networkInterfaces(), re-read every few seconds.
   */
  interfaceAddresses?: () => Iterable<string>;
  logger?: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

export async function loadPlans(file: string | undefined): Promise<PlanTable> {
  if (file === undefined) return DEFAULT_PLANS;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new PlansFileError([`cannot read ${file}: ${(err as Error).message}`]);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new PlansFileError([`${file} is not valid JSON: ${(err as Error).message}`]);
  }
  return applyPlanOverrides(DEFAULT_PLANS, parsed);
}

export async function buildDeps(config: Config, options: BuildDepsOptions = {}): Promise<AppDeps> {
  const clock = options.clock ?? systemClock;
  setPasswordCost(config.server.passwordHashCost);
  const plans = await loadPlans(config.plansFile);
  const closers: Array<() => Promise<void>> = [];
  try {
    const schema = options.databaseSchema ?? config.data.databaseSchema;
    const database = connectDatabase({
      url: config.data.databaseUrl,
      dataDir: config.data.dir,
      ...(schema ? { schema } : {}),
    });
    closers.push(() => database.close());
    await migrateToLatest(database.db as never, database.dialect);

    const storage = await createStorage(config.storage);
    closers.push(() => storage.close());

    // Scale-out (ARCHITECTURE.md): with Redis, limits, revocations and render locks are
    // shared through it; on PostgreSQL without Redis the counters live in the database, so
    // limits stay exact on any number of nodes; the embedded mode keeps them in process.
    let redis: RedisClients | null = null;
    if (config.redisUrl) {
      const clients = connectRedis(config.redisUrl);
      redis = clients;
      closers.push(() => clients.close());
      if (!(await clients.ready(5_000))) {
        options.logger?.warn({}, 'Redis is not reachable yet; limits answer 503 until it is');
      }
    }
    const prefix = config.redisPrefix;
    const dbCounters =
      !redis && database.dialect === 'postgres' ? postgresCounters(database.db) : null;
    const counters: CounterFactory = redis
      ? redisCounters(redis.commands, prefix)
      : (dbCounters ?? memoryCounters());
    // Revocations reach every node: over Redis, else PostgreSQL LISTEN/NOTIFY; the
    // in-process bus only serves SQLite, which is one node by construction.
    const listenBus =
      !redis && database.dialect === 'postgres' && config.data.databaseUrl
        ? postgresRevocations({
            url: config.data.databaseUrl,
            schema,
            notify: async (channel, payload) => {
              await sql`select pg_notify(${channel}, ${payload})`.execute(database.db);
            },
            ...(options.logger ? { logger: options.logger } : {}),
          })
        : null;
    if (listenBus && !(await listenBus.ready(5_000))) {
      options.logger?.warn({}, 'revocation LISTEN not in place yet; it keeps trying');
    }
    const revocations = redis
      ? redisRevocations(redis.commands, redis.subscriber, prefix)
      : (listenBus ?? memoryRevocations());
    closers.push(() => revocations.close());
    const renderLocks: RenderLocks = redis
      ? redisRenderLocks(redis.commands, prefix)
      : localRenderLocks();

    const ctx: AppContext = {
      store: createKyselyStore(database.db, database.dialect),
      clock,
      plans,
      counters,
      revocations,
      loginThrottle: {
        byEmail: counters.create({
          name: 'login-email',
          limit: ACCOUNT_LIMITS.loginFailuresPerEmail,
          windowMs: ACCOUNT_LIMITS.loginWindowMs,
        }),
        byIp: counters.create({
          name: 'login-ip',
          limit: ACCOUNT_LIMITS.loginFailuresPerIp,
          windowMs: ACCOUNT_LIMITS.loginWindowMs,
        }),
      },
    };

    // One DNS cache for every check. The checks before a render are bounded per client
    // (DECISIONS.md section 11); what the proxy and redirect checks resolve for pages being
    // rendered has a bound of its own, so pages cannot starve those checks.
    const dns = new DnsCache({ resolver: options.resolver ?? systemResolver() });
    const checkLookups = new LookupBound({
      perClient: DNS_LIMITS.perClient,
      total: DNS_LIMITS.total,
    });
    const pageLookups = new LookupBound({ perClient: DNS_LIMITS.proxy, total: DNS_LIMITS.proxy });
    const interfaceAddresses = options.interfaceAddresses;
    const egressPolicy: EgressPolicy = {
      allowlist: parseAllowlist(config.render.egressAllowlist),
      selfPorts: [config.server.port],
      resolve: (name, client) => dns.lookup(name, checkLookups, client),
      ...(interfaceAddresses ? { localAddresses: () => addressSet(interfaceAddresses()) } : {}),
    };
    const pagePolicy: EgressPolicy = {
      ...egressPolicy,
      resolve: (name) => dns.lookup(name, pageLookups, 'pages'),
    };
    const logger = options.logger;
    const metrics = new Metrics();
    const onStartFailed = (err: unknown): void =>
      logger?.error({ err: String(err) }, 'could not start the renderer');
    const renderer = lazyRenderer({ onStartFailed }, async () => {
      const proxy = await startEgressProxy({
        policy: pagePolicy,
        onRefused: () => metrics.refused('ssrf'),
        ...(logger ? { logger } : {}),
      });
      try {
        const real = await createChromiumRenderer({
          ...(config.render.chromePath ? { executablePath: config.render.chromePath } : {}),
          dataDir: config.data.dir,
          concurrency: config.render.concurrency,
          queueSize: config.render.queueSize,
          proxyUrl: proxy.url,
          checkNavigation: async (url) => {
            await checkTargetUrl(pagePolicy, url);
          },
          maxPageHeight: config.render.maxPageHeight,
          maxImagePixels: config.render.maxImagePixels,
          rendererMaxMemoryBytes: config.render.rendererMaxMemoryBytes,
          ...(logger ? { logger } : {}),
        });
        return {
          ...real,
          render: real.render.bind(real),
          stats: real.stats.bind(real),
          ready: real.ready.bind(real),
          close: async () => {
            await real.close();
            await proxy.close();
          },
        };
      } catch (err) {
        await proxy.close();
        throw err;
      }
    });
    closers.push(() => renderer.close());
    metrics.watchPool(() => renderer.stats());
    if (options.eagerBrowser) await renderer.warm();

    const capture: CaptureContext = {
      ...ctx,
      renderer,
      storage,
      guard: {
        parse: parseTargetUrl,
        screen: (url) => screenTargetUrl(egressPolicy, url),
        check: async (url, client) => {
          await checkTargetUrl(egressPolicy, url, client);
        },
      },
      flights: new SingleFlight<FlightResult>(),
      renderLocks,
      publicUrl: config.server.publicUrl.origin,
      renderTimeoutMs: config.render.timeoutMs,
    };
    const demoCounter = counters.create({
      name: 'demo',
      limit: plans.demo.daily_quota ?? 5,
      windowMs: 24 * 60 * MINUTE_MS,
    });
    const demoRequests = counters.create({
      name: 'demo-requests',
      limit: plans.demo.requests_per_hour ?? 30,
      windowMs: 60 * MINUTE_MS,
    });

    // One node sweeps at a time (a PostgreSQL advisory lock); claiming rows with
    // DELETE ... RETURNING already makes each image's deletion happen once.
    const runExclusive = exclusiveRunner(database);
    const sweep = async (): Promise<number> => {
      const outcome = await runExclusive('retention-sweeper', async () => {
        const swept = await sweepExpired(
          { store: ctx.store, storage, clock },
          {
            onError: (err, key) => logger?.warn({ err, key }, 'could not delete an expired image'),
          },
        );
        await dbCounters?.prune(Date.now());
        await ctx.store.sessions.deleteExpired(clock());
        return swept;
      });
      metrics.sweeps.inc({ outcome: outcome.ran ? 'ran' : 'skipped' });
      if (!outcome.ran) return 0;
      metrics.sweptImages.inc(outcome.value);
      return outcome.value;
    };
    if (options.sweeper !== false) {
      const timer = setInterval(() => {
        sweep()
          .then((n) => n > 0 && logger?.info({ swept: n }, 'retention sweep'))
          .catch((err) => logger?.error({ err }, 'retention sweep failed'));
      }, config.data.sweepIntervalMs);
      timer.unref();
      closers.push(async () => clearInterval(timer));
    }

    const billing = buildBilling(config, ctx, database, logger);
    if (options.sweeper !== false) {
      const timer = setInterval(() => {
        billing.settle().catch((err) => logger?.error({ err }, 'billing housekeeping failed'));
      }, MINUTE_MS);
      timer.unref();
      closers.push(async () => clearInterval(timer));
    }

    return {
      config,
      ctx,
      database,
      storage,
      capture,
      demo: { ...capture, demoCounter, demoRequests },
      renderer,
      egressPolicy,
      rateLimits: new RateLimits(ctx),
      metrics,
      apiKeyHook: apiKeyHook(ctx),
      sweep,
      billing,
      dashboardOrigins: new Set([
        ...config.server.dashboardOrigins,
        config.server.publicUrl.origin,
      ]),
      secureCookies: config.server.publicUrl.protocol === 'https:',
      sessionCookie: sessionCookiePolicy(config.server.publicUrl, config.server.dashboardOrigins),
      readiness: [
        { name: 'database', check: () => database.ping() },
        { name: 'storage', check: () => storage.ping() },
        ...(redis ? [{ name: 'redis', check: (redis as RedisClients).ping }] : []),
        {
          name: 'browser',
          check: async () => {
            if (!renderer.ready()) throw new Error('browser pool is restarting');
          },
        },
      ],
      close: async () => {
        for (const close of closers.reverse()) await close().catch(() => {});
      },
    };
  } catch (err) {
    for (const close of closers.reverse()) await close().catch(() => {});
    throw err;
  }
}

/** The payment provider config names: Stripe, or the built-in local one. */
function buildBilling(
  config: Config,
  ctx: AppContext,
  database: DatabaseHandle,
  logger: BuildDepsOptions['logger'],
): AppDeps['billing'] {
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
  return {
    ctx: billingCtx,
    local,
    settle: async () => {
      const moved = local ? await local.settleDue() : 0;
      await ctx.store.billing.pruneEvents(ctx.clock() - BILLING_LIMITS.eventRetentionMs);
      return moved;
    },
  };
}
