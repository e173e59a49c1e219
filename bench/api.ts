/**
 * Benchmark, second part: cache-hit captures through the full HTTP stack (auth, rate limit,
 * validation, quota, cache lookup, response) with autocannon, beside a bare Fastify route
 * returning the same JSON, measured in the same run. Plans are overridden so limits never
 * interfere. Targets: at least 0.3x the bare route and 5,000 requests/s at 10 connections,
 * p99 under 10 ms.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import Fastify from 'fastify';
import { createKey, signUp, startApp } from '../test/helpers/app.ts';
import { page, startSite } from '../test/helpers/fixtures.ts';

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

export async function runApiBench(): Promise<Record<string, unknown>> {
  const site = await startSite({ '/': page('<h1>bench</h1>') });
  const t = await startApp({
    db: 'sqlite',
    env: { EGRESS_ALLOWLIST: site.hostPort, LOG_LEVEL: 'warn' },
    plans: { free: { monthly_quota: 1_000_000_000, rate_per_minute: 1_000_000 } },
  });
  try {
    const u = await signUp(t);
    const { key } = await createKey(t, u.cookie);
    const body = JSON.stringify({ url: `${site.origin}/`, width: 640, height: 480 });
    const headers = { 'content-type': 'application/json', 'x-api-key': key };
    const first = await fetch(`${t.url}/v1/screenshots`, { method: 'POST', headers, body });
    const sample = await first.text();
    if (first.status !== 201) throw new Error(`warm-up capture failed: ${first.status} ${sample}`);

    const bare = Fastify({ logger: false });
    bare.post('/v1/screenshots', async (_req, reply) => reply.status(201).send(sample));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;

    // Warm both, then measure.
    await cannon({ url: `${bareUrl}/v1/screenshots`, method: 'POST', headers, body, duration: 2 });
    await cannon({ url: `${t.url}/v1/screenshots`, method: 'POST', headers, body, duration: 2 });
    const baseline = await cannon({
      url: `${bareUrl}/v1/screenshots`,
      method: 'POST',
      headers,
      body,
    });
    const full = await cannon({ url: `${t.url}/v1/screenshots`, method: 'POST', headers, body });
    await bare.close();
    const out = {
      cache_hit: full,
      bare_route: baseline,
      ratio_rps: full.rps / baseline.rps,
      targets: {
        ratio_at_least_0_3: full.rps / baseline.rps >= 0.3,
        rps_at_least_5000: full.rps >= 5000,
        p99_under_10ms: full.p99 < 10,
      },
    };
    if (full.non2xx > 0) throw new Error(`${full.non2xx} non-2xx answers during the cache-hit run`);
    return out;
  } finally {
    await t.close();
    await site.close();
  }
}

if (import.meta.main) {
  const result = await runApiBench();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
