import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import S3rver from 's3rver';
import { withPg } from './app.ts';
import type { FixtureSite } from './fixtures.ts';
import { type NodeProcess, startNode } from './node-process.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './services.ts';

/** An S3-compatible server (s3rver) in this process, restartable on the same port. */
export interface LocalS3 {
  endpoint: string;
  bucket: string;
  env: Record<string, string>;
  start(): Promise<void>;
  stop(): Promise<void>;
  close(): Promise<void>;
}

export async function startLocalS3(): Promise<LocalS3> {
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-s3-'));
  const bucket = `shots-${randomBytes(4).toString('hex')}`;
  let port = 0;
  let server: S3rver | null = null;
  const s3: LocalS3 = {
    endpoint: '',
    bucket,
    env: {},
    async start() {
      const s = new S3rver({
        address: '127.0.0.1',
        port,
        silent: true,
        directory: dir,
        configureBuckets: [{ name: bucket }],
      });
      const address = await s.run();
      server = s;
      port = address.port;
    },
    async stop() {
      await server?.close();
      server = null;
    },
    async close() {
      await s3.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  await s3.start();
  s3.endpoint = `http://127.0.0.1:${port}`;
  s3.env = {
    S3_BUCKET: bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_REGION: 'us-east-1',
    S3_ACCESS_KEY_ID: 'S3RVER',
    S3_SECRET_ACCESS_KEY: 'S3RVER',
    S3_FORCE_PATH_STYLE: 'true',
  };
  return s3;
}

export interface Cluster {
  nodes: NodeProcess[];
  schema: string;
  redisPrefix: string;
  s3: LocalS3;
  /** A query in the cluster's schema, straight to PostgreSQL. */
  sql<R extends pg.QueryResultRow>(text: string, params?: unknown[]): Promise<R[]>;
  /** Another node on the same database, Redis and store (`env` on top), added to `nodes`. */
  addNode(name: string, env?: Record<string, string>): Promise<NodeProcess>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  nodes: number;
  /** Default TEST_REDIS_URL; null runs without Redis. */
  redisUrl?: string | null;
  /** What the nodes connect to (default TEST_DATABASE_URL; a proxy in outage tests). */
  databaseUrl?: string;
  plans?: Record<string, Record<string, unknown>>;
  env?: Record<string, string>;
  /** Each node's own variables, on top of `env`, by position. */
  perNode?: Array<Record<string, string>>;
}

/**
 * N identical nodes as separate processes sharing the machine's PostgreSQL (a fresh schema
 * per cluster), Redis (a fresh key prefix) and a local S3-compatible store, each waited for
 * until /readyz answers 200.
 */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const tag = randomBytes(5).toString('hex');
  const schema = `c_${tag}`;
  const redisPrefix = `test-${tag}:`;
  const redisUrl = options.redisUrl === undefined ? TEST_REDIS_URL : options.redisUrl;
  await withPg((client) => client.query(`CREATE SCHEMA ${schema}`));
  const s3 = await startLocalS3();
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-cluster-'));
  const env: Record<string, string> = {
    DATABASE_URL: options.databaseUrl ?? TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    ...(redisUrl ? { REDIS_URL: redisUrl, REDIS_PREFIX: redisPrefix } : {}),
    ...s3.env,
    ...options.env,
  };
  if (options.plans) {
    env.PLANS_FILE = path.join(dir, 'plans.json');
    await writeFile(env.PLANS_FILE, JSON.stringify(options.plans));
  }
  const nodes: NodeProcess[] = [];
  const close = async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    await s3.close();
    await rm(dir, { recursive: true, force: true });
    await withPg((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    if (redisUrl) await dropKeys(redisUrl, redisPrefix).catch(() => {});
  };
  try {
    // The first node migrates the schema; the others start together once it listens.
    const names = Array.from({ length: options.nodes }, (_, i) => String.fromCharCode(65 + i));
    const own = (i: number) => ({ ...env, ...options.perNode?.[i] });
    nodes.push(await startNode(names[0] ?? 'A', own(0), { ready: false }));
    nodes.push(
      ...(await Promise.all(names.slice(1).map((name, i) => startNode(name, own(i + 1))))),
    );
    await waitReady(nodes);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    nodes,
    schema,
    redisPrefix,
    s3,
    addNode: async (name, extra = {}) => {
      const node = await startNode(name, { ...env, ...extra });
      nodes.push(node);
      return node;
    },
    sql: async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []) => {
      const client = new pg.Client({
        connectionString: TEST_DATABASE_URL,
        options: `-c search_path=${schema}`,
      });
      await client.connect();
      try {
        return (await client.query<R>(text, params)).rows;
      } finally {
        await client.end();
      }
    },
    close,
  };
}

export async function waitReady(nodes: NodeProcess[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const node of nodes) {
    for (;;) {
      const res = await node.fetch('/readyz').catch(() => null);
      if (res?.status === 200) break;
      if (Date.now() > deadline) {
        throw new Error(`node ${node.name} not ready: ${res?.status} ${await res?.text()}`);
      }
      await res?.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

async function dropKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, {
    maxRetriesPerRequest: 1,
    lazyConnect: true,
    connectTimeout: 1_000,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      if (keys.length > 0) await client.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}

/** Metric samples summed over nodes: `name{labels}` -> value. */
export async function scrape(nodes: NodeProcess[]): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  for (const node of nodes) {
    const text = await (await node.fetch('/metrics')).text();
    for (const line of text.split('\n')) {
      if (!line || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      const key = line.slice(0, at);
      totals.set(key, (totals.get(key) ?? 0) + Number(line.slice(at + 1)));
    }
  }
  return totals;
}

/** Waits (bounded, so a failed request cannot hang the file) until the site saw `path`. */
export async function hit(site: FixtureSite, path: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!site.hits.get(path)) {
    if (Date.now() > deadline) throw new Error(`${path} was never requested`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
