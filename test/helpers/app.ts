import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe } from 'node:test';
import pg from 'pg';
import type { LazyRenderer } from '../../src/adapters/browser/index.ts';
import { createEgress } from '../../src/adapters/egress/guard.ts';
import type { Resolver } from '../../src/adapters/egress/resolver.ts';
import { buildApp } from '../../src/app.ts';
import type { BrowserDeps } from '../../src/browser-deps.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { type AppDeps, type BuildDepsOptions, buildDeps } from '../../src/deps.ts';
import type { App } from '../../src/http/types.ts';
import type { Clock } from '../../src/lib/time.ts';
import { longDataDir, removeDataDir } from './data-dir.ts';
import { type FixtureSite, startSite } from './fixtures.ts';
import { serviceSkip, TEST_DATABASE_URL } from './services.ts';

export type DbKind = 'sqlite' | 'postgres';
export const DATABASES: readonly DbKind[] = ['sqlite', 'postgres'];

/**
 * Runs a suite once on the embedded SQLite and once on the local PostgreSQL, each app in
 * its own fresh database file or schema.
 */
export function describeEachDatabase(name: string, fn: (db: DbKind) => void): void {
  for (const db of DATABASES) {
    describe(`${name} [${db}]`, async () => {
      const skip = db === 'postgres' ? await serviceSkip('postgres') : false;
      if (skip) {
        describe('skipped', { skip }, () => {});
        return;
      }
      fn(db);
    });
  }
}

export interface TestApp {
  url: string;
  app: App;
  deps: AppDeps;
  dataDir: string;
  /** Every log line the app wrote. */
  logs: string[];
  fetch(path: string, init?: RequestInit & { json?: unknown; cookie?: string }): Promise<Response>;
  close(): Promise<void>;
}

export interface StartAppOptions {
  db: DbKind;
  env?: Record<string, string>;
  plans?: Record<string, Record<string, unknown>>;
  clock?: Clock;
  /** The data directory's path is longer than this; default LONG_DATA_DIR_MIN (120). */
  dataDirLength?: number;
  /** Name resolution for the egress checks (no real DNS in tests). */
  resolver?: BuildDepsOptions['resolver'];
  /** The machine's interface addresses as the egress checks see them. */
  interfaceAddresses?: BuildDepsOptions['interfaceAddresses'];
  /** Waits between webhook delivery attempts (tests shorten the day-long schedule). */
  webhookBackoffMs?: readonly number[];
  /**
   * A renderer in place of Chromium (test/helpers/memory-renderer.ts, the domain tier): no
   * browser is started. The guard and the webhooks' egress stay the real ones, on `resolver`
   * (by default one that resolves nothing: no real DNS).
   */
  renderer?: LazyRenderer;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startApp(options: StartAppOptions): Promise<TestApp> {
  const dataDir = await longDataDir('test', options.dataDirLength);
  const port = options.env?.PORT ? Number(options.env.PORT) : await freePort();
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
    // Real scrypt at a lower work factor, so hundreds of logins fit in a test run.
    PASSWORD_HASH_COST: '12',
    ...options.env,
  };
  if (options.plans) {
    const file = path.join(dataDir, 'plans.json');
    await writeFile(file, JSON.stringify(options.plans));
    env.PLANS_FILE = file;
  }
  let schema: string | undefined;
  if (options.db === 'postgres') {
    schema = `t_${randomBytes(6).toString('hex')}`;
    await withPg((client) => client.query(`CREATE SCHEMA ${schema}`));
    env.DATABASE_URL = TEST_DATABASE_URL;
  }
  const config = loadConfig(env);
  let log: App['log'] | undefined;
  const deps = await buildDeps(config, {
    ...(options.renderer ? { browser: withRenderer(config, options.renderer, options) } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.resolver ? { resolver: options.resolver } : {}),
    ...(options.interfaceAddresses ? { interfaceAddresses: options.interfaceAddresses } : {}),
    ...(options.webhookBackoffMs ? { webhookBackoffMs: options.webhookBackoffMs } : {}),
    ...(schema ? { databaseSchema: schema } : {}),
    logger: {
      debug: (obj, msg) => log?.debug(obj, msg),
      info: (obj, msg) => log?.info(obj, msg),
      warn: (obj, msg) => log?.warn(obj, msg),
      error: (obj, msg) => log?.error(obj, msg),
    },
  });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  const app = await buildApp(deps, { logStream });
  log = app.log;
  await app.listen({ port, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    app,
    deps,
    dataDir,
    logs,
    fetch: (p, init = {}) => {
      const { json, cookie, headers, ...rest } = init;
      const h = new Headers(headers);
      if (json !== undefined) h.set('content-type', 'application/json');
      if (cookie) h.set('cookie', cookie);
      return fetch(`${url}${p}`, {
        ...rest,
        headers: h,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
    close: async () => {
      await app.close();
      await deps.close();
      if (schema) await withPg((client) => client.query(`DROP SCHEMA ${schema} CASCADE`));
      await removeDataDir(dataDir);
    },
  };
}

/** What src/browser-deps.ts builds, with `renderer` in place of Chromium's. */
function withRenderer(
  config: Config,
  renderer: LazyRenderer,
  options: Pick<StartAppOptions, 'resolver' | 'interfaceAddresses'>,
): BrowserDeps {
  const egress = createEgress({
    allowlist: config.render.egressAllowlist,
    selfPorts: [config.server.port],
    resolver: options.resolver ?? NO_DNS,
    ...(options.interfaceAddresses ? { interfaceAddresses: options.interfaceAddresses } : {}),
  });
  return { guard: egress.guard, renderer, webhookPolicy: egress.webhookPolicy };
}

/** Resolves no name: a test that needs one gives its own resolver. */
const NO_DNS: Resolver = {
  resolve: async (name) => {
    throw Object.assign(new Error(`${name}: no DNS in tests`), { code: 'ENOTFOUND' });
  },
};

export async function withPg<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** `name=value` of the session cookie in a response, for the next request's Cookie header. */
export function sessionCookie(res: Response): string {
  const setCookie = res.headers.getSetCookie().find((c) => c.startsWith('session='));
  if (!setCookie) throw new Error(`no session cookie in response (${res.status})`);
  return setCookie.split(';')[0] ?? '';
}

let counter = 0;
export const uniqueEmail = (tag = 'user') =>
  `${tag}-${process.pid}-${++counter}-${randomBytes(3).toString('hex')}@example.com`;

export const PASSWORD = 'correct horse battery';

/** Signs up a new account and returns its cookie (on an app or a node process). */
export async function signUp(
  t: Pick<TestApp, 'fetch'>,
  email = uniqueEmail(),
): Promise<{ cookie: string; email: string; id: number }> {
  const res = await t.fetch('/v1/auth/signup', {
    method: 'POST',
    json: { email, password: PASSWORD },
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { user: { id: number } };
  return { cookie: sessionCookie(res), email, id: body.user.id };
}

/** Creates an API key for the cookie's account: the plaintext, id and signing secret. */
export async function createKey(
  t: Pick<TestApp, 'fetch'>,
  cookie: string,
  name?: string,
): Promise<{ key: string; id: number; signing_secret: string }> {
  const res = await t.fetch('/v1/keys', { method: 'POST', cookie, json: name ? { name } : {} });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { key: string; id: number; signing_secret: string };
}

/** POST /v1/screenshots with `key`; `body` on top of a small 320x200 viewport. */
export function postCapture(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
): Promise<Response> {
  return fetch(`${t.url}/v1/screenshots`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ width: 320, height: 200, ...body }),
  });
}

/**
 * A fixture site with `routes` and a SQLite app allowed to capture it (Free at 1,000 captures
 * a minute, so the rate limit stays out of the way).
 */
export async function startCaptureSite(
  routes: Parameters<typeof startSite>[0],
): Promise<{ t: TestApp; site: FixtureSite }> {
  const site = await startSite(routes);
  const t = await startApp({
    db: 'sqlite',
    env: { EGRESS_ALLOWLIST: site.hostPort },
    plans: { free: { rate_per_minute: 1000 } },
  }).catch(async (err: unknown) => {
    await site.close();
    throw err;
  });
  return { t, site };
}
