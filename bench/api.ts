/**
 * Benchmark, second part: cache-hit captures through the full HTTP stack (auth, rate limit,
 * validation, quota, cache lookup, response) with autocannon, beside a bare Fastify route
 * returning the same JSON, measured in the same run. Plans are overridden so limits never
 * interfere. On the embedded SQLite, then on PostgreSQL + Redis. Targets: SQLite at least 0.3x
 * the bare route and 5,000 requests/s at 10 connections, p99 under 10 ms; PostgreSQL + Redis
 * at least 2,000 requests/s.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { newApiKey } from '../test/helpers/accounts.ts';
import { startApp } from '../test/helpers/app.ts';
import { page, startSite } from '../test/helpers/fixtures.ts';
import { serviceSkip, TEST_REDIS_URL } from '../test/helpers/services.ts';
import { median, type Target } from './stats.ts';

export interface Run {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

const AUTOCANNON = path.resolve(import.meta.dirname, '..', 'node_modules', '.bin', 'autocannon');

/**
 * autocannon runs in its own process: in-process it would take half the CPU from the
 * server it measures.
 */
export async function cannon(options: {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
  duration?: number;
  connections?: number;
}): Promise<Run> {
  const args = [
    '-j',
    '-c',
    String(options.connections ?? 10),
    '-d',
    String(options.duration ?? 8),
    '-m',
    options.method,
    '-b',
    options.body,
  ];
  for (const [k, v] of Object.entries(options.headers)) args.push('-H', `${k}=${v}`);
  args.push(options.url);
  const { stdout } = await promisify(execFile)(AUTOCANNON, args, { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
  };
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** Cache-hit figures of one engine, beside the bare route, in interleaved rounds. */
export interface EngineRun {
  engine: string;
  /** The round with the median hit throughput. */
  cache_hit: Run & { cpuUsPerRequest: number };
  bare_route: Run & { cpuUsPerRequest: number };
  /** Median over rounds of hit / bare throughput, each pair measured back to back. */
  ratio_rps: number;
  rounds: number;
}

const ROUND_SECONDS = 3;
const ROUNDS = 3;

/**
 * Measures the service (started in this process on `engine`) on a cache hit, beside a bare
 * Fastify route in this process answering the same body: rounds of bare then hit, so
 * drift and neighbours hit both alike. CPU per request is this process's (user + system)
 * over the run, less noisy on a shared machine than throughput.
 */
async function measureEngine(options: {
  engine: string;
  db: 'sqlite' | 'postgres';
  env: Record<string, string>;
  siteOrigin: string;
  rounds: number;
}): Promise<EngineRun> {
  const t = await startApp({
    db: options.db,
    env: options.env,
    plans: { free: { monthly_quota: 1_000_000_000, rate_per_minute: 1_000_000 } },
  });
  const bare = Fastify({ logger: false });
  try {
    const key = await newApiKey(t);
    const body = JSON.stringify({ url: `${options.siteOrigin}/`, width: 640, height: 480 });
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const first = await fetch(`${t.url}/v1/screenshots`, { method: 'POST', headers, body });
    const sample = await first.text();
    if (first.status !== 201) throw new Error(`warm-up capture failed: ${first.status} ${sample}`);
    bare.post('/v1/screenshots', async (_req, reply) => reply.status(201).send(sample));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
    const measured = async (url: string, duration: number) => {
      const before = process.cpuUsage();
      const run = await cannon({ url, method: 'POST', headers, body, duration });
      const cpu = process.cpuUsage(before);
      const requests = Math.max(1, run.rps * duration);
      return { ...run, cpuUsPerRequest: Math.round((cpu.user + cpu.system) / requests) };
    };
    // Warm the service's paths (the bare route has none), then measure.
    await measured(`${t.url}/v1/screenshots`, 2);
    const hits: EngineRun['cache_hit'][] = [];
    const bares: EngineRun['bare_route'][] = [];
    const ratios: number[] = [];
    for (let r = 0; r < options.rounds; r++) {
      const b = await measured(`${bareUrl}/v1/screenshots`, ROUND_SECONDS);
      const h = await measured(`${t.url}/v1/screenshots`, ROUND_SECONDS);
      if (h.non2xx > 0) throw new Error(`${h.non2xx} non-2xx answers during the cache-hit run`);
      bares.push(b);
      hits.push(h);
      ratios.push(h.rps / b.rps);
    }
    const mid = (runs: Array<Run & { cpuUsPerRequest: number }>) =>
      [...runs].sort((a, b) => a.rps - b.rps)[Math.floor((runs.length - 1) / 2)] as Run & {
        cpuUsPerRequest: number;
      };
    return {
      engine: options.engine,
      cache_hit: mid(hits),
      bare_route: mid(bares),
      ratio_rps: median(ratios),
      rounds: options.rounds,
    };
  } finally {
    await bare.close();
    await t.close();
  }
}

export interface ApiResult {
  sqlite: EngineRun;
  postgres_redis: EngineRun | null;
  targets: Target[];
}

export async function runApiBench(options: { quick?: boolean } = {}): Promise<ApiResult> {
  const site = await startSite({ '/': page('<h1>bench</h1>') });
  const rounds = options.quick ? 1 : ROUNDS;
  try {
    const env = { EGRESS_ALLOWLIST: site.hostPort, LOG_LEVEL: 'warn' };
    const sqlite = await measureEngine({
      engine: 'SQLite',
      db: 'sqlite',
      env,
      siteOrigin: site.origin,
      rounds,
    });
    const skip = (await serviceSkip('postgres')) || (await serviceSkip('redis'));
    const postgresRedis = skip
      ? null
      : await measureEngine({
          engine: 'PostgreSQL + Redis',
          db: 'postgres',
          env: {
            ...env,
            REDIS_URL: TEST_REDIS_URL,
            REDIS_PREFIX: `bench-${Date.now().toString(36)}:`,
          },
          siteOrigin: site.origin,
          rounds,
        });
    return {
      sqlite,
      postgres_redis: postgresRedis,
      targets: [
        {
          name: 'cache hit, SQLite: throughput / bare route',
          value: `${sqlite.ratio_rps.toFixed(2)}x`,
          threshold: '>= 0.3x',
          met: sqlite.ratio_rps >= 0.3,
        },
        {
          name: 'cache hit, SQLite: requests/s at 10 connections',
          value: String(Math.round(sqlite.cache_hit.rps)),
          threshold: '>= 5000',
          met: sqlite.cache_hit.rps >= 5000,
        },
        {
          name: 'cache hit, SQLite: p99',
          value: `${sqlite.cache_hit.p99} ms`,
          threshold: '< 10 ms',
          met: sqlite.cache_hit.p99 < 10,
        },
        {
          name: 'cache hit, PostgreSQL + Redis: requests/s at 10 connections',
          value: postgresRedis ? String(Math.round(postgresRedis.cache_hit.rps)) : '-',
          threshold: '>= 2000',
          met: (postgresRedis?.cache_hit.rps ?? 0) >= 2000,
        },
      ],
    };
  } finally {
    await site.close();
  }
}

if (import.meta.main) {
  const result = await runApiBench({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
