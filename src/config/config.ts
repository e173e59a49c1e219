import { availableParallelism } from 'node:os';
import path from 'node:path';
import { BOUNDS } from '../domain/bounds.ts';
import { type Env, EnvReader } from './env.ts';
import { type OperatorProxy, readProxiesFile } from './proxies-file.ts';

/**
 * Render slots when RENDER_CONCURRENCY is not set: two per core (64 at most). A capture waits
 * as much as it works (the load, the network's and the page's quiet windows; on the public
 * internet far more), and a slot that waits leaves its core idle unless another slot has work:
 * on the benchmark's 2 cores, 4 slots gave 21% more captures/s of a small page at 4 at a time
 * than 2 slots, 8% of the realistic page, at the same CPU per capture (docs/deployment.md).
 */
export function defaultRenderConcurrency(): number {
  return Math.min(64, 2 * Math.max(1, availableParallelism()));
}

/**
 * The whole configuration, parsed once at boot. Nothing else in the service reads
 * `process.env`: every module receives the slice it needs from here.
 */
export interface Config {
  nodeEnv: 'development' | 'production' | 'test';
  server: {
    port: number;
    host: string;
    publicUrl: URL;
    /** Origins allowed to use the session cookie for state-changing requests (and CORS). */
    dashboardOrigins: string[];
    /** Fastify `trustProxy` value: false, or a list of proxy addresses / CIDRs. */
    trustProxy: false | string[];
    /**
     * Bearer token that opens GET /metrics to any client; unset: loopback clients only.
     */
    metricsToken: string | undefined;
    logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
    bodyLimitBytes: number;
    /** log2 of scrypt's N for new password hashes. */
    passwordHashCost: number;
    keepAliveTimeoutMs: number;
    /**
     * After SIGTERM, how long captures in flight may run on before they are cut off (503) and
     * the process closes (docs/deployment.md, "Shutdown").
     */
    shutdownGraceMs: number;
  };
  data: {
    dir: string;
    /** Unset: embedded SQLite file under `dir`. */
    databaseUrl: URL | undefined;
    /** PostgreSQL schema (it must exist); unset: the server's default search path. */
    databaseSchema: string | undefined;
    /** How often the retention sweeper runs (one node at a time on PostgreSQL). */
    sweepIntervalMs: number;
    /**
     * A stored image with no record is deleted once it is this old (the orphan sweep, which
     * runs every half of it); younger ones may still be waiting for their record.
     */
    orphanMinAgeMs: number;
  };
  redisUrl: URL | undefined;
  /** Prefix of every Redis key and channel, so several deployments can share one Redis. */
  redisPrefix: string;
  plansFile: string | undefined;
  render: RenderSettings;
  storage:
    | { kind: 'disk'; dir: string }
    | {
        kind: 's3';
        bucket: string;
        endpoint: string | undefined;
        region: string;
        accessKeyId: string | undefined;
        secretAccessKey: string | undefined;
        forcePathStyle: boolean;
      };
  billing: BillingConfig;
  jobs: {
    /** Async captures run at once by this node's workers; 0: this node runs none. */
    workers: number;
    /** How long a worker holds a job without renewing it (a dead node's job waits this long). */
    leaseMs: number;
  };
  quota: {
    /**
     * How long a unit reserved for a capture in flight stays held without its node renewing
     * it: the units of a node that died come back within this plus a quarter of it.
     */
    holdLeaseMs: number;
  };
  /**
   * SERVER_SECRET: the root of every derived secret (signing secrets, the keys of credentials
   * at rest); unset, one kept in the database is used (docs/deployment.md, "Secrets"), never
   * with NODE_ENV=production (the boot stops).
   */
  serverSecret: string | undefined;
}

/**
 * The render section: what the renderer (adapters/browser) is built with, and the capture
 * deadline the domain gives each render.
 */
export interface RenderSettings {
  /** Chromium binary; unset: findChromium()'s search (the usual install paths). */
  chromePath: string | undefined;
  /** Captures rendered at once. */
  concurrency: number;
  /** Captures allowed to wait for a slot; more are refused (503 `overloaded`). */
  queueSize: number;
  /** A capture's deadline, its wait for a slot included. */
  timeoutMs: number;
  /** Device px; full-page and element images are cut there (WebP: at 16,383 at most). */
  maxPageHeight: number;
  /** Pixels (width x height, device px) an image may hold; beyond it the height is cut. */
  maxImagePixels: number;
  /** Resident memory one renderer process may hold before it is killed. */
  rendererMaxMemoryBytes: number;
  /** The wait for the page at rest after load, at most (ms); 0 turns it off. */
  settleMaxMs: number;
  /** Largest CDP message read from Chromium; a larger one replaces the browser. */
  maxMessageBytes: number;
  egressAllowlist: string;
  /** The operator's upstream proxies (PROXIES_FILE; docs/proxies.md); empty: none. */
  proxies: OperatorProxy[];
  /** The longest wait for an upstream proxy to connect and open a tunnel (ms). */
  proxyTimeoutMs: number;
}

/** The payment provider: Stripe when its settings are given, else the built-in local one. */
export type BillingConfig =
  | { provider: 'local' }
  | {
      provider: 'stripe';
      secretKey: string;
      /** Several during a signing-secret rotation; a webhook signed by any of them is accepted. */
      webhookSecrets: string[];
      priceId: string;
      /** Where the SDK sends API calls (tests point it at a local stand-in); unset = Stripe. */
      apiBase: URL | undefined;
    };

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export function loadConfig(env: Env): Config {
  const r = new EnvReader(env);
  const nodeEnv = r.oneOf(
    'NODE_ENV',
    ['development', 'production', 'test'] as const,
    'development',
  );
  // The render section first: the server's shutdown grace and the job workers default from it.
  const render = parseRender(r);
  const server = parseServer(r, render.timeoutMs);
  const data = parseData(r);
  const config: Config = {
    nodeEnv,
    server,
    data,
    ...parseRedis(r),
    plansFile: r.optional('PLANS_FILE'),
    render,
    storage: parseStorage(r, data.dir),
    billing: parseBilling(r, nodeEnv),
    jobs: {
      // Queued work (async captures, batches, monitor runs) leaves one render slot to the
      // synchronous captures, whose callers are waiting: one sent while the queue is deep
      // waits for no render at all, not for the one in progress.
      workers: r.int('ASYNC_WORKERS', Math.max(1, render.concurrency - 1), 0, 64),
      leaseMs: r.int('JOB_LEASE_MS', 30_000, 2_000, 600_000),
    },
    quota: {
      // At most 90 s: a dead node's units are back within 2 minutes (docs/plans-and-limits.md).
      holdLeaseMs: r.int('QUOTA_HOLD_LEASE_MS', 60_000, 2_000, 90_000),
    },
    serverSecret: parseServerSecret(r, nodeEnv),
  };
  if (r.problems.length > 0) throw new ConfigError(r.problems);
  return config;
}

function parseServer(r: EnvReader, renderTimeoutMs: number): Config['server'] {
  // Not 0: PUBLIC_URL is derived from the port, and the egress guard refuses the service's own
  // port, so both must know the real one before listening.
  const port = r.int('PORT', 8080, 1, 65535);
  const host = r.string('HOST', '0.0.0.0');
  const publicUrl = r.url('PUBLIC_URL', ['http:', 'https:']) ?? defaultPublicUrl(host, port);
  if (publicUrl.pathname !== '/' || publicUrl.search || publicUrl.hash) {
    r.problem('PUBLIC_URL must be an origin without a path, query or fragment');
  }
  const dashboardOrigins = parseOrigins(r, r.optional('DASHBOARD_ORIGINS')) ?? [publicUrl.origin];
  const trustProxy = parseTrustProxy(r, r.optional('TRUST_PROXY'));
  const metricsToken = r.optional('METRICS_TOKEN');
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,512}$/.test(metricsToken)) {
    r.problem('METRICS_TOKEN must be 16 to 512 printable characters without spaces');
  }
  if (r.raw('SHUTDOWN_TIMEOUT_MS') !== undefined) {
    r.problem('SHUTDOWN_TIMEOUT_MS was replaced by SHUTDOWN_GRACE_SECONDS (in seconds)');
  }
  return {
    port,
    host,
    publicUrl,
    dashboardOrigins,
    trustProxy,
    metricsToken,
    logLevel: r.oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    bodyLimitBytes: BOUNDS.http.bodyBytes,
    passwordHashCost: r.int('PASSWORD_HASH_COST', 15, 10, 17),
    keepAliveTimeoutMs: BOUNDS.http.keepAliveTimeoutMs,
    // By default a capture accepted just before the signal still ends on its own deadline.
    shutdownGraceMs:
      r.int('SHUTDOWN_GRACE_SECONDS', Math.ceil(renderTimeoutMs / 1000) + 10, 1, 3_600) * 1000,
  };
}

function parseData(r: EnvReader): Config['data'] {
  const dir = path.resolve(r.string('DATA_DIR', './data'));
  const databaseUrl = r.url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const databaseSchema = r.optional('DATABASE_SCHEMA');
  if (databaseSchema !== undefined) {
    // Interpolated into the connection's search_path: a plain identifier only.
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(databaseSchema)) {
      r.problem('DATABASE_SCHEMA must be a lower-case identifier ([a-z_][a-z0-9_]*, 63 at most)');
    }
    if (r.raw('DATABASE_URL') === undefined)
      r.problem('DATABASE_SCHEMA is set but DATABASE_URL is not');
  }
  return {
    dir,
    databaseUrl,
    databaseSchema,
    sweepIntervalMs: r.int('SWEEP_INTERVAL_MS', 60_000, 1_000, 3_600_000),
    orphanMinAgeMs: r.int('ORPHAN_IMAGE_MIN_AGE_MS', 3_600_000, 5_000, 86_400_000),
  };
}

function parseRedis(r: EnvReader): Pick<Config, 'redisUrl' | 'redisPrefix'> {
  const redisUrl = r.url('REDIS_URL', ['redis:', 'rediss:']);
  const redisPrefix = r.string('REDIS_PREFIX', 'shotsmith:');
  if (!/^[A-Za-z0-9:_.-]{1,64}$/.test(redisPrefix)) {
    r.problem('REDIS_PREFIX must be 1 to 64 characters of A-Z a-z 0-9 : _ . -');
  }
  return { redisUrl, redisPrefix };
}

function parseRender(r: EnvReader): RenderSettings {
  const render: RenderSettings = {
    chromePath: r.optional('CHROME_PATH'),
    concurrency: r.int('RENDER_CONCURRENCY', defaultRenderConcurrency(), 1, 64),
    queueSize: r.int('RENDER_QUEUE', 50, 0, 10_000),
    timeoutMs: r.int('RENDER_TIMEOUT_MS', 30_000, 1_000, 300_000),
    // Taller than Chromium draws in one piece: such images are drawn in slices and joined
    // (tall-image.ts). 65,535 is JPEG's own limit; WebP's is 16,383, applied per capture.
    maxPageHeight: r.int('MAX_PAGE_HEIGHT', 65_535, 256, 65_535),
    // 64 megapixels in the ordinary (SI) sense. At most 90 million: an image arrives as one
    // CDP message (the base64 of a PNG), which must fit CDP_MAX_MESSAGE_MB (checked below).
    maxImagePixels: r.int('MAX_IMAGE_PIXELS', 64_000_000, 1_000_000, 90_000_000),
    rendererMaxMemoryBytes: r.int('RENDERER_MAX_MEMORY_MB', 2_048, 128, 65_536) * 2 ** 20,
    settleMaxMs: r.int('SETTLE_MAX_MS', 2_000, 0, 30_000),
    // At most 480 MiB: a message is decoded into one string, and V8's longest is 512 MiB.
    maxMessageBytes:
      r.int('CDP_MAX_MESSAGE_MB', BOUNDS.browser.maxProtocolMessageBytes / 2 ** 20, 16, 480) *
      2 ** 20,
    egressAllowlist: r.string('EGRESS_ALLOWLIST', ''),
    proxies: [],
    proxyTimeoutMs: r.int('PROXY_TIMEOUT_MS', 10_000, 500, 60_000),
  };
  const proxiesFile = r.optional('PROXIES_FILE');
  if (proxiesFile !== undefined) {
    const { proxies, problems } = readProxiesFile(proxiesFile);
    for (const problem of problems) r.problem(problem);
    render.proxies = proxies;
  }
  const imageMessage = largestImageMessageBytes(render.maxImagePixels);
  if (imageMessage > render.maxMessageBytes) {
    r.problem(
      `CDP_MAX_MESSAGE_MB must be at least ${Math.ceil(imageMessage / 2 ** 20)} for MAX_IMAGE_PIXELS=${render.maxImagePixels} (an image of that size arrives in one message)`,
    );
  }
  return render;
}

/**
 * The CDP message that carries the largest image: the base64 of a PNG of incompressible
 * pixels with alpha (5.35 characters a pixel measured at 64 MP, 4 bytes a pixel plus PNG
 * framing), with room for the message around it.
 */
export function largestImageMessageBytes(pixels: number): number {
  return Math.ceil(pixels * 5.36) + 64 * 1024;
}

function parseServerSecret(r: EnvReader, nodeEnv: Config['nodeEnv']): string | undefined {
  const secret = r.optional('SERVER_SECRET');
  if (secret === undefined && nodeEnv === 'production') {
    // Unset, the root of every derived secret (signing secrets, the keys that protect
    // credentials at rest) would be kept in the database: a copy of it would be enough to
    // forge signed links and read a queued job's credentials.
    r.problem(
      'SERVER_SECRET is required with NODE_ENV=production: at least 32 characters, the same ' +
        'on every node (e.g. openssl rand -base64 32)',
    );
  }
  if (secret !== undefined && secret.length < 32) {
    r.problem('SERVER_SECRET must be at least 32 characters (e.g. openssl rand -base64 32)');
  }
  return secret;
}

function defaultPublicUrl(host: string, port: number): URL {
  // 0.0.0.0 and :: listen everywhere; a client reaches them through localhost.
  const shown = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
  const hostPart = shown.includes(':') ? `[${shown}]` : shown;
  return new URL(`http://${hostPart}:${port}`);
}

function parseOrigins(r: EnvReader, value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const origins: string[] = [];
  for (const entry of value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    try {
      const url = new URL(entry);
      if (url.origin === 'null' || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw new Error('not an http(s) origin');
      }
      origins.push(url.origin);
    } catch {
      r.problem(`DASHBOARD_ORIGINS entry "${entry}" is not an http(s) origin`);
    }
  }
  return origins;
}

function parseTrustProxy(r: EnvReader, value: string | undefined): false | string[] {
  if (value === undefined || ['false', '0', 'no', 'off'].includes(value.toLowerCase())) {
    return false;
  }
  const entries = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    // Addresses or CIDRs only: "true" (trust everyone) would let any client pick its IP.
    if (!/^[0-9a-fA-F.:]+(\/\d{1,3})?$/.test(entry) && entry !== 'loopback') {
      r.problem(`TRUST_PROXY entry "${entry}" must be an IP address, a CIDR range or "loopback"`);
    }
  }
  return entries;
}

function parseStorage(r: EnvReader, dataDir: string): Config['storage'] {
  const bucket = r.optional('S3_BUCKET');
  if (bucket === undefined) {
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) {
      if (r.optional(name) !== undefined) r.problem(`${name} is set but S3_BUCKET is not`);
    }
    return { kind: 'disk', dir: path.join(dataDir, 'images') };
  }
  const endpoint = r.url('S3_ENDPOINT', ['http:', 'https:']);
  const accessKeyId = r.optional('S3_ACCESS_KEY_ID');
  const secretAccessKey = r.optional('S3_SECRET_ACCESS_KEY');
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    r.problem('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  }
  return {
    kind: 's3',
    bucket,
    endpoint: endpoint?.toString(),
    region: r.string('S3_REGION', 'us-east-1'),
    accessKeyId,
    secretAccessKey,
    forcePathStyle: r.bool('S3_FORCE_PATH_STYLE', endpoint !== undefined),
  };
}

const STRIPE_SETTINGS = ['STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET', 'STRIPE_PRICE_ID'] as const;

function parseBilling(r: EnvReader, nodeEnv: Config['nodeEnv']): BillingConfig {
  const explicit = r.raw('BILLING_PROVIDER');
  if (explicit !== undefined && explicit !== 'stripe' && explicit !== 'local') {
    r.problem(`BILLING_PROVIDER must be one of stripe, local, got "${explicit}"`);
  }
  const set = STRIPE_SETTINGS.filter((name) => r.optional(name) !== undefined);
  const stripeConfigured = set.length === STRIPE_SETTINGS.length;
  if (set.length > 0 && !stripeConfigured) {
    const missing = STRIPE_SETTINGS.filter((name) => !set.includes(name));
    r.problem(`Stripe settings go together: ${set.join(', ')} set but ${missing.join(', ')} not`);
  }
  const apiBase = r.url('STRIPE_API_BASE', ['http:', 'https:']);

  const localInProduction = r.bool('LOCAL_BILLING_IN_PRODUCTION', false);
  if (explicit === 'local' || (explicit === undefined && !stripeConfigured)) {
    if (nodeEnv === 'production') {
      // The local provider hands out Pro for a button press: a public instance must never
      // run it by accident, so only the long, explicit switch allows it.
      if (stripeConfigured) {
        r.problem('BILLING_PROVIDER=local is refused in production while Stripe is configured');
      } else if (!localInProduction) {
        r.problem(
          'the local billing provider is refused with NODE_ENV=production (it gives Pro away ' +
            'for free): set STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET and STRIPE_PRICE_ID, or ' +
            'LOCAL_BILLING_IN_PRODUCTION=1 if this instance is not public and you mean it',
        );
      }
    }
    return { provider: 'local' };
  }
  if (!stripeConfigured) {
    if (explicit === 'stripe' && set.length === 0) {
      r.problem(`BILLING_PROVIDER=stripe needs ${STRIPE_SETTINGS.join(', ')}`);
    }
    return { provider: 'local' };
  }

  const secretKey = r.optional('STRIPE_SECRET_KEY') ?? '';
  if (!/^(sk|rk)_[A-Za-z0-9_]+$/.test(secretKey)) {
    r.problem('STRIPE_SECRET_KEY must be a secret or restricted key (sk_... or rk_...)');
  }
  const webhookSecrets = (r.optional('STRIPE_WEBHOOK_SECRET') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (webhookSecrets.length === 0 || !webhookSecrets.every((s) => /^whsec_\S+$/.test(s))) {
    r.problem('STRIPE_WEBHOOK_SECRET must be one or more comma-separated whsec_... secrets');
  }
  const priceId = r.optional('STRIPE_PRICE_ID') ?? '';
  if (!/^price_[A-Za-z0-9_]+$/.test(priceId)) {
    r.problem('STRIPE_PRICE_ID must be a price id (price_...)');
  }
  return { provider: 'stripe', secretKey, webhookSecrets, priceId, apiBase };
}
