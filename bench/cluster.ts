/**
 * Benchmark, third part: two nodes as separate processes on PostgreSQL + Redis + a local
 * S3-compatible store, driven through both alternately, beside one node on the same
 * engines measured in the same run:
 *   - cache hits: autocannon (out of process) on one node with C connections, then on both
 *     nodes at once with C/2 connections each;
 *   - captures (every one a miss: a distinct URL): W workers, one node, then alternating.
 * The machine is shared by the nodes, their browsers, the databases and the load
 * generator, so two nodes measure the cost of coordination here, not added capacity.
 *
 *   ./node_modules/.bin/node bench/cluster.ts [--quick]
 */
import { nodeAccount } from '../test/helpers/accounts.ts';
import { type Cluster, startCluster } from '../test/helpers/cluster.ts';
import { page, startSite } from '../test/helpers/fixtures.ts';
import type { NodeProcess } from '../test/helpers/node-process.ts';
import { serviceSkip } from '../test/helpers/services.ts';
import { cannon, type Run } from './api.ts';
import { percentile } from './stats.ts';

export interface ClusterBenchOptions {
  /** Shorter runs (for a smoke check of the harness). */
  quick?: boolean;
  log?: (line: string) => void;
}

interface CaptureRun {
  captures: number;
  throughputPerSec: number;
  medianMs: number;
  p95Ms: number;
  errors: number;
}

export interface ClusterResult {
  nodes: number;
  cacheHit: Run;
  capture: CaptureRun;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

async function measure(
  cluster: Cluster,
  siteOrigin: string,
  options: { connections: number; duration: number; captures: number; workers: number },
): Promise<ClusterResult> {
  const { nodes } = cluster;
  const { key } = await nodeAccount(nodes[0] as NodeProcess, { key: true });
  const headers = { 'content-type': 'application/json', 'x-api-key': key };
  const body = JSON.stringify({ url: `${siteOrigin}/`, width: 640, height: 480 });
  // The first capture renders; every node then answers it from the shared cache.
  for (const node of nodes) {
    const res = await node.fetch('/v1/screenshots', { method: 'POST', headers, body });
    if (res.status !== 201)
      throw new Error(`warm-up on ${node.name}: ${res.status} ${await res.text()}`);
  }

  const hitRun = async (duration: number): Promise<Run> => {
    const runs = await Promise.all(
      nodes.map((node) =>
        cannon({
          url: `${node.url}/v1/screenshots`,
          method: 'POST',
          headers,
          body,
          duration,
          connections: Math.max(1, Math.round(options.connections / nodes.length)),
        }),
      ),
    );
    return {
      rps: round(runs.reduce((sum, r) => sum + r.rps, 0)),
      // Per-node figures side by side: the slower node's percentiles.
      p50: Math.max(...runs.map((r) => r.p50)),
      p99: Math.max(...runs.map((r) => r.p99)),
      non2xx: runs.reduce((sum, r) => sum + r.non2xx, 0),
    };
  };
  await hitRun(2);
  const cacheHit = await hitRun(options.duration);

  // Captures that all miss: a distinct URL each, sent to the nodes in turn.
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const tag = Date.now().toString(36);
  await Promise.all(
    Array.from({ length: options.workers }, async () => {
      for (;;) {
        const i = next++;
        if (i >= options.captures) return;
        const node = nodes[i % nodes.length] as NodeProcess;
        const t0 = performance.now();
        const res = await node.fetch('/v1/screenshots', {
          method: 'POST',
          headers,
          body: JSON.stringify({ url: `${siteOrigin}/p?${tag}-${i}`, width: 1280, height: 720 }),
        });
        await res.arrayBuffer();
        if (res.status === 201) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((x, y) => x - y);
  return {
    nodes: nodes.length,
    cacheHit,
    capture: {
      captures: latencies.length,
      throughputPerSec: round((latencies.length / elapsed) * 1000, 2),
      medianMs: round(percentile(latencies, 50)),
      p95Ms: round(percentile(latencies, 95)),
      errors,
    },
  };
}

export async function runClusterBench(options: ClusterBenchOptions = {}): Promise<{
  oneNode: ClusterResult;
  twoNodes: ClusterResult;
  ratios: { cacheHitRps: number; captureThroughput: number };
}> {
  const log = options.log ?? ((line: string) => console.log(line));
  const skip = (await serviceSkip('postgres')) || (await serviceSkip('redis'));
  if (skip) throw new Error(`the cluster benchmark needs PostgreSQL and Redis: ${skip}`);
  const settings = options.quick
    ? { connections: 10, duration: 3, captures: 12, workers: 4 }
    : { connections: 10, duration: 3, captures: 8, workers: 4 };
  const site = await startSite({
    '/': page('<h1>bench</h1>'),
    '/p': page('<h1>Hello</h1><p>A trivial page for the capture benchmark.</p>'),
  });
  const plans = {
    free: { monthly_quota: 1_000_000_000, rate_per_minute: 1_000_000, retention_hours: 1 },
  };
  const env = { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '2', LOG_LEVEL: 'error' };
  const results: ClusterResult[] = [];
  try {
    // One configuration alive at a time: they share the machine's two cores.
    for (const nodes of [1, 2]) {
      const cluster = await startCluster({ nodes, plans, env });
      try {
        const result = await measure(cluster, site.origin, settings);
        results.push(result);
        log(
          `${nodes} node(s): cache hit ${result.cacheHit.rps} req/s (p50 ${result.cacheHit.p50} ms, ` +
            `p99 ${result.cacheHit.p99} ms); captures ${result.capture.throughputPerSec}/s ` +
            `(median ${result.capture.medianMs} ms, p95 ${result.capture.p95Ms} ms, ` +
            `${result.capture.errors} errors)`,
        );
      } finally {
        await cluster.close();
      }
    }
  } finally {
    await site.close();
  }
  const [oneNode, twoNodes] = results as [ClusterResult, ClusterResult];
  return {
    oneNode,
    twoNodes,
    ratios: {
      cacheHitRps: round(twoNodes.cacheHit.rps / oneNode.cacheHit.rps, 2),
      captureThroughput: round(
        twoNodes.capture.throughputPerSec / oneNode.capture.throughputPerSec,
        2,
      ),
    },
  };
}

if (import.meta.main) {
  const result = await runClusterBench({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
