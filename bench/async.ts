/**
 * Benchmark: async captures (docs/api.md, "Async captures") on PostgreSQL + Redis (BullMQ) +
 * a local S3-compatible store, one node and then two nodes as separate processes, each beside
 * synchronous captures of the same pages on the same nodes in the same run:
 *   - async: 2 clients, each queueing a job (a distinct URL, so every one renders) and waiting
 *     for its webhook before the next: jobs/s, and enqueue-to-webhook latency;
 *   - baseline: 2 clients doing synchronous captures of the same kind of page.
 * Two nodes take turns answering the requests; every node runs workers.
 *
 *   ./node_modules/.bin/node bench/async.ts [--quick]
 */
import { nodeAccount } from '../test/helpers/accounts.ts';
import { type Cluster, startCluster } from '../test/helpers/cluster.ts';
import { page, startSite } from '../test/helpers/fixtures.ts';
import type { NodeProcess } from '../test/helpers/node-process.ts';
import { serviceSkip } from '../test/helpers/services.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../test/helpers/webhooks.ts';
import { percentile } from './stats.ts';

export interface AsyncBenchOptions {
  quick?: boolean;
  log?: (line: string) => void;
}

export interface LoopRun {
  jobs: number;
  perSecond: number;
  p50Ms: number;
  p95Ms: number;
  errors: number;
}

export interface AsyncNodesResult {
  nodes: number;
  /** Enqueue (POST sent) to webhook received. */
  async: LoopRun;
  /** POST sent to 201 received. */
  sync: LoopRun;
}

const CONCURRENCY = 2;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** `count` runs of `one` by CONCURRENCY clients, each waiting for its own before the next. */
async function loop(count: number, one: (i: number) => Promise<number | null>): Promise<LoopRun> {
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const ms = await one(i).catch(() => null);
        if (ms === null) errors++;
        else latencies.push(ms);
      }
    }),
  );
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return {
    jobs: latencies.length,
    perSecond: round((latencies.length / elapsed) * 1000, 2),
    p50Ms: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
    errors,
  };
}

/** Resolves when the webhook for job `id` arrives (or rejects after `timeoutMs`). */
function webhookFor(
  hooks: WebhookReceiver,
  seen: Map<string, number>,
  id: string,
  timeoutMs: number,
) {
  return new Promise<number>((resolve, reject) => {
    const end = Date.now() + timeoutMs;
    const check = () => {
      for (const h of hooks.received.slice(seen.size)) {
        const body = JSON.parse(h.body) as { data: { id: string; status: string } };
        seen.set(body.data.id, h.at);
      }
      const at = seen.get(id);
      if (at !== undefined) return resolve(at);
      if (Date.now() > end) return reject(new Error(`no webhook for ${id}`));
      setTimeout(check, 10);
    };
    check();
  });
}

async function measure(
  cluster: Cluster,
  origin: string,
  hooks: WebhookReceiver,
  count: number,
): Promise<AsyncNodesResult> {
  const node = cluster.nodes[0] as NodeProcess;
  const { key } = await nodeAccount(node, { plan: 'pro', cluster, key: true });
  const { nodes } = cluster;
  const tag = Date.now().toString(36);
  const seen = new Map<string, number>();
  const post = (i: number, body: Record<string, unknown>) =>
    (nodes[i % nodes.length] as NodeProcess).fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { width: 1280, height: 720, ...body },
    });
  // Warm every node's browser.
  for (const [i] of nodes.entries()) {
    const res = await post(i, { url: `${origin}/p?warm-${tag}-${i}` });
    await res.arrayBuffer();
  }
  const sync = await loop(count, async (i) => {
    const t0 = Date.now();
    const res = await post(i, { url: `${origin}/p?sync-${tag}-${i}` });
    await res.arrayBuffer();
    return res.status === 201 ? Date.now() - t0 : null;
  });
  const async = await loop(count, async (i) => {
    const t0 = Date.now();
    const res = await post(i, {
      url: `${origin}/p?async-${tag}-${i}`,
      async: true,
      webhook_url: hooks.url,
    });
    if (res.status !== 202) return null;
    const { id } = (await res.json()) as { id: string };
    const at = await webhookFor(hooks, seen, id, 60_000);
    return at - t0;
  });
  const failed = [...hooks.received].filter((h) => h.body.includes('"screenshot.failed"')).length;
  return { nodes: nodes.length, async: { ...async, errors: async.errors + failed }, sync };
}

export async function runAsyncBench(options: AsyncBenchOptions = {}): Promise<{
  oneNode: AsyncNodesResult;
  twoNodes: AsyncNodesResult;
}> {
  const log = options.log ?? ((line: string) => console.log(line));
  const skip = (await serviceSkip('postgres')) || (await serviceSkip('redis'));
  if (skip) throw new Error(`the async benchmark needs PostgreSQL and Redis: ${skip}`);
  const count = options.quick ? 6 : 8;
  const site = await startSite({
    '/p': page('<h1>Hello</h1><p>A trivial page for the async benchmark.</p>'),
  });
  const results: AsyncNodesResult[] = [];
  try {
    for (const nodes of [1, 2]) {
      const hooks = await startWebhookReceiver();
      const cluster = await startCluster({
        nodes,
        plans: { pro: { monthly_quota: 1_000_000_000, rate_per_minute: 1_000_000 } },
        env: {
          EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
          RENDER_CONCURRENCY: '2',
          LOG_LEVEL: 'error',
        },
      });
      try {
        const r = await measure(cluster, site.origin, hooks, count);
        results.push(r);
        log(
          `${nodes} node(s): async ${r.async.perSecond} jobs/s (enqueue to webhook p50 ` +
            `${r.async.p50Ms} ms, p95 ${r.async.p95Ms} ms, ${r.async.errors} errors); sync ` +
            `${r.sync.perSecond} captures/s (p50 ${r.sync.p50Ms} ms)`,
        );
      } finally {
        await cluster.close();
        await hooks.close();
      }
    }
  } finally {
    await site.close();
  }
  const [oneNode, twoNodes] = results as [AsyncNodesResult, AsyncNodesResult];
  return { oneNode, twoNodes };
}

if (import.meta.main) {
  const result = await runAsyncBench({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
