/**
 * Monitors (docs/api.md, "Monitors") on one node as its own process (`node src/main.ts`, two
 * render slots and so, by default, one async worker, PostgreSQL), beside baselines measured
 * in the same run:
 *   - compare: the comparison of two 1280x800 captures of the realistic page (the second with
 *     its heading hidden), timed in this process with the service's own comparer (sharp decode
 *     + pixelmatch + the diff PNG), against the CPU of one capture of that page by the node
 *     (its Node process and its Chromium's whole process tree, /proc, over several captures,
 *     each a cache miss). Target: at most 10%. Then the worst comparison, two 64-megapixel
 *     images of noise: its CPU, wall time and memory held, and the event loop's delay meanwhile
 *     (target: p99 at most 50 ms; the comparison runs in a worker).
 *   - 1,000 due: 1,000 monitors of the realistic page (four accounts' 250 each) made due in the same minute (each at
 *     its own offset into it, as the schedule spreads them). The node's ticks claim them and
 *     queue one job each; printed: when each run started against its due time, how deep the
 *     job queue was as it filled and drained, and whether any monitor ran twice. Target: every
 *     run started within the minute's spread (and a tick), none twice. Meanwhile synchronous
 *     captures of the same page are sent one after another; their time against the same
 *     captures on the idle node before (one render time). Target: the extra wait of a
 *     synchronous capture (its 90th percentile) at most one render time.
 *
 *   ./node_modules/.bin/node bench/monitors.ts [--quick]
 */

import { randomBytes } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import sharp from 'sharp';
import { processTree } from '../src/adapters/browser/process/proc.ts';
import { createImageComparer } from '../src/adapters/compare/pixel-compare.ts';
import { BOUNDS } from '../src/domain/bounds.ts';
import { slotOffset } from '../src/domain/monitors/monitor-rules.ts';
import { nodeAccount } from '../test/helpers/accounts.ts';
import { type Cluster, startCluster } from '../test/helpers/cluster.ts';
import type { NodeProcess } from '../test/helpers/node-process.ts';
import { serviceSkip } from '../test/helpers/services.ts';
import { startBenchSites } from './fixtures/site.ts';
import { median, percentile, type Target } from './stats.ts';

export interface MonitorBenchOptions {
  quick?: boolean;
  log?: (line: string) => void;
}

export interface MonitorBenchResult {
  /** CPU ms of one realistic capture by the node (Node + Chromium). */
  captureCpuMs: number;
  /** CPU ms of one comparison with its diff (median of the tries). */
  compareCpuMs: number;
  /** The worst comparison: two 64-megapixel images of noise. */
  worst: WorstComparison;
  compareRatio: number;
  changedFraction: number;
  monitors: number;
  /** Runs started in the window, and monitors that ran more than once. */
  started: number;
  twice: number;
  /** Start minus due time, ms. */
  lateness: { p50: number; p95: number; max: number };
  /** The latest start after the minute began, ms (the spread is 60,000, a tick 5,000). */
  lastStartMs: number;
  /** Queued jobs over the window: [seconds since the minute began, queued, runs started]. */
  depth: Array<[number, number, number]>;
  /** One render time: synchronous captures of the page on the idle node, median ms. */
  idleMs: number;
  /** The same captures while the runs queue, ms each. */
  loadedMs: number[];
  /** 90th percentile of (loaded - idle), ms. */
  extraWaitP90: number;
  targets: Target[];
}

const COMPARE_TARGET = 0.1;
/** The node's event loop while the worst comparison runs (docs/security.md). */
const LOOP_DELAY_TARGET_MS = 50;
const NOISE_SIDE = 8000;

export interface WorstComparison {
  pixels: number;
  cpuMs: number;
  wallMs: number;
  /** Resident memory above what the process held before, at its peak, MiB. */
  heldMiB: number;
  loopDelayP99Ms: number;
}

/**
 * The worst a monitor can make its node compare: two captures of noise at the
 * MAX_IMAGE_PIXELS default (nearly every pixel differs, each gets pixelmatch's anti-aliasing
 * check), compared here by the service's own comparer. Printed: its CPU (this process, the
 * worker included), its wall time, the memory it held at its peak, and the event loop's delay
 * meanwhile, which the worker keeps low.
 */
async function worstComparison(log: (line: string) => void): Promise<WorstComparison> {
  const noise = () =>
    sharp(randomBytes(NOISE_SIDE * NOISE_SIDE * 3), {
      raw: { width: NOISE_SIDE, height: NOISE_SIDE, channels: 3 },
    })
      .png({ compressionLevel: 0, adaptiveFiltering: false })
      .toBuffer();
  const images = [await noise(), await noise()];
  const comparer = createImageComparer();
  try {
    // The comparer moves what it is given: copies, made before the baseline is read.
    const copies = [Buffer.from(images[0] as Buffer), Buffer.from(images[1] as Buffer)];
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpu = process.cpuUsage();
    const started = performance.now();
    await comparer.compare(copies[0] as Buffer, copies[1] as Buffer, { threshold: 0.001 });
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    loop.disable();
    clearInterval(sampler);
    const result: WorstComparison = {
      pixels: NOISE_SIDE * NOISE_SIDE,
      cpuMs: round((used.user + used.system) / 1000, 0),
      wallMs: round(wallMs, 0),
      heldMiB: round((rssPeak - rssBefore) / 2 ** 20, 0),
      loopDelayP99Ms: round(loop.percentile(99) / 1e6, 1),
    };
    log(
      `monitors: worst comparison (64 MP of noise) ${result.cpuMs} ms CPU, ${result.wallMs} ms wall, ${result.heldMiB} MiB held, loop delay p99 ${result.loopDelayP99Ms} ms`,
    );
    return result;
  } finally {
    await comparer.close();
  }
}
const ACCOUNTS = 4;
const CLAIM_WORK_MS = 1_000;
const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU ms so far of a process and everything below it (its Chromium), live and reaped. */
function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + p.cpuMs + p.exitedChildrenCpuMs, 0);
}

export async function runMonitorBench(
  options: MonitorBenchOptions = {},
): Promise<MonitorBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const skip = await serviceSkip('postgres');
  if (skip) throw new Error(`monitors bench: ${skip}`);
  const count = options.quick ? 200 : 1_000;
  const sites = await startBenchSites(['127.0.0.1']);
  const realistic = sites.urls.realistic[0] as string;
  let cluster: Cluster | null = null;
  try {
    cluster = await startCluster({
      nodes: 1,
      redisUrl: null,
      plans: {
        pro: {
          monthly_quota: 1_000_000,
          rate_per_minute: 100_000,
          max_monitors: count / ACCOUNTS,
          max_queued_jobs: 100,
        },
      },
      // Two slots: ASYNC_WORKERS' default leaves one to synchronous captures.
      env: {
        EGRESS_ALLOWLIST: sites.hostPorts.join(','),
        LOG_LEVEL: 'error',
        RENDER_CONCURRENCY: '2',
      },
    });
    const node = cluster.nodes[0] as NodeProcess;
    // Four accounts share the monitors (each account's other requests are bounded to
    // BOUNDS.rates.otherEndpointsPerMinute); the first also sends the synchronous captures.
    const accounts: Array<{ id: number; key: string }> = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      accounts.push(await nodeAccount(node, { plan: 'pro', cluster, key: true }));
    }
    const api = (path: string, json?: unknown, key = accounts[0]?.key ?? '') =>
      node.fetch(path, {
        method: json === undefined ? 'GET' : 'POST',
        headers: { 'x-api-key': key },
        ...(json === undefined ? {} : { json }),
      });
    let n = 0;
    /** A synchronous capture of the realistic page (a cache miss), its time in ms. */
    const capture = async (extra: Record<string, unknown> = {}) => {
      const start = performance.now();
      const res = await api('/v1/screenshots', {
        url: `${realistic}?sync=${n++}`,
        width: 1280,
        height: 800,
        ...extra,
      });
      if (res.status !== 201) throw new Error(`capture: ${res.status} ${await res.text()}`);
      const body = (await res.json()) as { image_url: string };
      return { ms: performance.now() - start, imageUrl: body.image_url };
    };

    // One render time, and the CPU of one capture, on the idle node.
    await capture();
    await capture();
    const captures = options.quick ? 4 : 8;
    const cpuBefore = treeCpuMs(node.pid);
    const idle: number[] = [];
    for (let i = 0; i < captures; i++) idle.push((await capture()).ms);
    const captureCpuMs = (treeCpuMs(node.pid) - cpuBefore) / captures;
    const idleMs = median(idle);
    log(`monitors: one realistic capture ${round(idleMs, 0)} ms, ${round(captureCpuMs, 0)} ms CPU`);

    // Two captures of the page, the second with its heading hidden, compared.
    const images = await Promise.all(
      [capture(), capture({ hide_selectors: ['h1'] })].map(async (c) =>
        Buffer.from(await (await fetch((await c).imageUrl)).arrayBuffer()),
      ),
    );
    const comparer = createImageComparer();
    let changedFraction = 0;
    const cpu: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = process.cpuUsage();
      // Copies: the comparer moves the buffers it is given to its worker.
      const result = await comparer.compare(
        Buffer.from(images[0] as Buffer),
        Buffer.from(images[1] as Buffer),
        { threshold: 0 },
      );
      const used = process.cpuUsage(before);
      changedFraction = result.changedFraction;
      if (i > 0) cpu.push((used.user + used.system) / 1000); // the first warms sharp up
    }
    await comparer.close();
    const compareCpuMs = median(cpu);
    const worst = await worstComparison(log);
    log(
      `monitors: comparison ${round(compareCpuMs)} ms CPU (${round((100 * compareCpuMs) / captureCpuMs)}% of a capture), changed ${round(100 * changedFraction, 2)}%`,
    );

    // The monitors, then every one due within the same minute, each at its own offset.
    log(`monitors: creating ${count} monitors`);
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const res = await api(
        '/v1/monitors',
        { url: `${realistic}?monitor=${i}`, every: '1h', options: { width: 1280, height: 800 } },
        accounts[i % ACCOUNTS]?.key,
      );
      if (res.status !== 201) throw new Error(`monitor: ${res.status} ${await res.text()}`);
      ids.push(((await res.json()) as { id: string }).id);
    }
    const minute = Date.now() + 3_000;
    await cluster.sql(
      `UPDATE monitors SET next_run_at = $1 + (next_run_at % ${BOUNDS.monitors.spreadMs})
        WHERE user_id = ANY($2)`,
      [minute, accounts.map((a) => a.id)],
    );
    const dueOf = new Map(ids.map((id) => [id, minute + slotOffset(id)]));

    // Synchronous captures sent one after another while the runs are claimed and queued.
    const windowEnd = minute + BOUNDS.monitors.spreadMs + 10_000;
    const loaded: number[] = [];
    const syncLoop = (async () => {
      await sleep(Math.max(0, minute + 5_000 - Date.now()));
      while (Date.now() < windowEnd) loaded.push((await capture()).ms);
    })();
    const depth: Array<[number, number, number]> = [];
    const sql = cluster.sql.bind(cluster);
    while (Date.now() < windowEnd) {
      const [row] = await sql<{ queued: string; runs: string }>(
        `SELECT (SELECT count(*) FROM capture_jobs WHERE status = 'queued') AS queued,
                (SELECT count(*) FROM monitor_runs) AS runs`,
      );
      depth.push([round((Date.now() - minute) / 1000, 0), Number(row?.queued), Number(row?.runs)]);
      await sleep(2_000);
    }
    await syncLoop;
    const runs = await sql<{ monitor_id: string; at: string }>(
      'SELECT monitor_id, at FROM monitor_runs',
    );
    const perMonitor = new Map<string, number>();
    const lateness: number[] = [];
    let lastStart = 0;
    for (const r of runs) {
      perMonitor.set(r.monitor_id, (perMonitor.get(r.monitor_id) ?? 0) + 1);
      lateness.push(Number(r.at) - (dueOf.get(r.monitor_id) ?? Number.NaN));
      lastStart = Math.max(lastStart, Number(r.at) - minute);
    }
    lateness.sort((a, b) => a - b);
    const twice = [...perMonitor.values()].filter((v) => v > 1).length;
    const extra = loaded.map((ms) => ms - idleMs).sort((a, b) => a - b);
    const extraWaitP90 = percentile(extra, 90);
    // The last monitor is due just before the minute's spread ends; a tick finds it at most
    // tickMs later, and the tick's claims (a second's work for a thousand) start it.
    const spreadAndTick = BOUNDS.monitors.spreadMs + BOUNDS.monitors.tickMs + CLAIM_WORK_MS;
    const result: MonitorBenchResult = {
      captureCpuMs: round(captureCpuMs),
      compareCpuMs: round(compareCpuMs),
      compareRatio: round(compareCpuMs / captureCpuMs, 3),
      changedFraction: round(changedFraction, 4),
      worst,
      monitors: count,
      started: runs.length,
      twice,
      lateness: {
        p50: round(percentile(lateness, 50), 0),
        p95: round(percentile(lateness, 95), 0),
        max: round(lateness.at(-1) ?? Number.NaN, 0),
      },
      lastStartMs: round(lastStart, 0),
      depth,
      idleMs: round(idleMs, 0),
      loadedMs: loaded.map((ms) => round(ms, 0)),
      extraWaitP90: round(extraWaitP90, 0),
      targets: [],
    };
    result.targets = [
      {
        name: 'monitors: comparison of two 1280x800 captures / one realistic capture (CPU)',
        value: `${round(100 * result.compareRatio, 1)}%`,
        threshold: `<= ${100 * COMPARE_TARGET}%`,
        met: result.compareRatio <= COMPARE_TARGET,
        beside: `${result.compareCpuMs} ms vs ${result.captureCpuMs} ms`,
      },
      {
        name: 'monitors: event loop delay (p99) while two 64-megapixel images of noise are compared',
        value: `${worst.loopDelayP99Ms} ms`,
        threshold: `<= ${LOOP_DELAY_TARGET_MS} ms`,
        met: worst.loopDelayP99Ms <= LOOP_DELAY_TARGET_MS,
        beside: `${worst.cpuMs} ms CPU, ${worst.wallMs} ms wall, ${worst.heldMiB} MiB held`,
      },
      {
        name: `monitors: ${count} due in one minute, started within the spread, a tick and a second of claiming, none twice`,
        value: `${runs.length} started, last ${round(lastStart / 1000)} s in, ${twice} twice`,
        threshold: `all by ${spreadAndTick / 1000} s, 0 twice`,
        met: runs.length === count && lastStart <= spreadAndTick && twice === 0,
        beside: `start - due p50 ${result.lateness.p50} ms, max ${result.lateness.max} ms`,
      },
      {
        name: 'monitors: a synchronous capture sent meanwhile, extra wait (p90) / one render time',
        value: `${result.extraWaitP90} ms`,
        threshold: `<= ${result.idleMs} ms`,
        met: loaded.length > 0 && result.extraWaitP90 <= result.idleMs,
        beside: `${loaded.length} captures, median ${round(median(loaded), 0)} ms vs idle ${result.idleMs} ms`,
      },
    ];
    return result;
  } finally {
    await cluster?.close();
    await sites.close();
  }
}

export function monitorMarkdown(r: MonitorBenchResult): string {
  const depth = r.depth.map(([s, q, runs]) => `${s} s: ${runs} started, ${q} queued`).join('; ');
  return [
    '### Monitors (one node, PostgreSQL, two render slots, one async worker)',
    '',
    `- Comparison with its diff: ${r.compareCpuMs} ms CPU, ${round(100 * r.compareRatio)}% of one realistic capture (${r.captureCpuMs} ms); changed fraction ${r.changedFraction}.`,
    `- The worst comparison, two ${r.worst.pixels / 1e6}-megapixel images of noise (compared at the ${BOUNDS.monitors.compareMaxPixels / 1e6}-megapixel bound): ${r.worst.cpuMs} ms CPU, ${r.worst.wallMs} ms wall, ${r.worst.heldMiB} MiB more resident at its peak (the worker's decoding and diff); the event loop's delay meanwhile p99 ${r.worst.loopDelayP99Ms} ms.`,
    `- ${r.monitors} monitors due in one minute: ${r.started} runs started, ${r.twice} twice; start - due p50 ${r.lateness.p50} ms, p95 ${r.lateness.p95} ms, max ${r.lateness.max} ms; last start ${round(r.lastStartMs / 1000)} s into the minute.`,
    `- Queue as it filled (seconds into the minute): ${depth}.`,
    `- Synchronous captures meanwhile: ${r.loadedMs.join(', ')} ms against ${r.idleMs} ms idle; extra wait p90 ${r.extraWaitP90} ms.`,
  ].join('\n');
}

if (import.meta.main) {
  const r = await runMonitorBench({ quick: process.argv.includes('--quick') });
  console.log(monitorMarkdown(r));
  for (const t of r.targets)
    console.log(`${t.met ? 'met' : 'NOT MET'}: ${t.name}: ${t.value} (${t.threshold})`);
  process.exit(0);
}
