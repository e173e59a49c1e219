/**
 * Memory at rest and over a soak, for the real service (`node src/main.ts`: Node + its
 * Chromium), beside a plain puppeteer browser that did the same work, measured in the same run.
 *
 *   1. Concurrency 4 (RENDER_CONCURRENCY=4, four accounts taking turns) on the realistic page
 *      (bench/fixtures/site.ts), 1280x800 PNG captures through POST /v1/screenshots.
 *   2. Rest: REST_MS without a capture and until the process count holds still
 *      (SETTLED_MS), then PSS (/proc/PID/smaps_rollup) of the Node process and of every
 *      Chromium process (its crash handlers included). Target: <= 0.7 GiB.
 *   3. The first capture after the rest, timed beside captures made back to back before it.
 *   4. Soak: SOAK_CAPTURES captures (`--soak=N` sets another length) at concurrency 4 on the
 *      trivial page, small JPEGs (what a leak holds is per capture, pages, contexts,
 *      listeners, not per pixel; 1280x800 PNGs of the realistic page would take a quarter of
 *      an hour). At each tenth of the soak (half a second after
 *      the step, once its pages are reset): PSS, process count, and Node's heap after a full
 *      collection (heap-probe.ts). Halfway and at the end, after REST_MS without a capture:
 *      PSS and processes at rest. Growth, the target: Node's heap after collection (median
 *      of the second half of the checkpoints against the first half's) and Chromium at rest
 *      (the end against halfway: PSS, and renderer processes). PSS read while captures come
 *      and go is printed too, but swings by a quarter from one reading to the next (which of
 *      the pool's contexts are old, how much garbage V8 holds), too much for a verdict of a
 *      few percent.
 * Baseline: puppeteer-core's launch() with our flags, a new context per capture, the same
 * captures of the same page at concurrency 4, then the same rest and the same PSS reading.
 *
 *   ./node_modules/.bin/node bench/memory.ts [--quick]
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  processesMentioning,
  processKind,
  processTree,
  pssOf,
  treeUsage,
} from '../src/adapters/browser/process/proc.ts';
import { nodeAccount } from '../test/helpers/accounts.ts';
import { freePort } from '../test/helpers/app.ts';
import { type NodeProcess, startNode } from '../test/helpers/node-process.ts';
import { launchBaselineBrowser } from './fixtures/baseline-browser.ts';
import { startBenchSites } from './fixtures/site.ts';
import { HeapProbe } from './heap-probe.ts';
import { median } from './stats.ts';

/** Render slots of the measured service (RENDER_CONCURRENCY): the at-rest figure per slot. */
export const MEMORY_SLOTS = 4;
const CONCURRENCY = MEMORY_SLOTS;
const VIEWPORT = { width: 1280, height: 800 };
/** Accounts taking turns (each its own client: contexts are never shared between them). */
const CLIENTS = 4;
/** Captures of the realistic page before the rest. */
const LOAD_CAPTURES = 20;
/** Idle time before the at-rest reading (the pool shrinks after 5 s without a capture). */
const REST_MS = 8_000;
/**
 * Then the process count must hold still this long, at most REST_CAP_MS more: the shrink
 * closes contexts whose renderer processes exit a moment later, which on a slow machine
 * outlasts REST_MS (a soak read 10 processes at rest halfway and 12 at the end). One process
 * may still differ between readings at rest: Chromium's storage service, which it starts and
 * stops by itself (the readings list the processes by kind).
 */
const SETTLED_MS = 3_000;
const REST_CAP_MS = 15_000;
const SOAK_CAPTURES = 1_000;
/** Readings over the soak: one per tenth, so the halfway reading is one of them. */
export const SOAK_CHECKPOINTS = 10;
/** The soak's captures: each one a whole capture (context, page, navigation, reset), small. */
const SOAK_SHOT = { width: 480, height: 360, format: 'jpeg' };
/** Pause after each soak step before its reading. */
const SOAK_SETTLE_MS = 500;
/**
 * The at-rest target for Node + Chromium: no more than the last run on the full browser
 * (588 MiB): the headless shell, the default engine, must not cost memory.
 */
export const TARGET_MIB = 588;
const TARGET_BYTES = TARGET_MIB * 2 ** 20;

export interface MemoryBenchOptions {
  quick?: boolean;
  log?: (line: string) => void;
  /** The soak's length, a multiple of 10 (default SOAK_CAPTURES; none in quick mode). */
  soakCaptures?: number;
}

export interface Reading {
  processes: number;
  /** The processes by kind ("renderer 6, zygote 2, ..."): what a change in the count is. */
  kinds: string;
  /**
   * Renderer processes: what captures start (contexts, pages, sites). Chromium's browser-level
   * helpers come and go on their own timers (its storage service; its on-device model service,
   * started about three minutes after launch with no page asking), so a leak shows here.
   */
  renderers: number;
  pssMiB: number;
  nodePssMiB: number;
  chromiumPssMiB: number;
}

export interface MemoryResult {
  load: { captures: number; elapsedMs: number; errors: number };
  atRest: Reading;
  baseline: { atRest: Reading; captures: number; elapsedMs: number };
  targetMet: boolean;
  firstAfterRestMs: number;
  backToBackMs: number[];
  soak: {
    page: string;
    captures: number;
    elapsedMs: number;
    errors: number;
    checkpoints: Array<Reading & { captures: number; nodeHeapMiB: number }>;
    firstHalfMiB: number;
    secondHalfMiB: number;
    growthPercent: number;
    processGrowth: number;
    /** Node's heap after a full collection: medians of the halves' checkpoints. */
    nodeHeapFirstHalfMiB: number;
    nodeHeapSecondHalfMiB: number;
    nodeHeapGrowthPercent: number;
    /** At rest halfway and at the end. */
    restHalfway: Reading;
    restEnd: Reading;
    chromiumRestGrowthPercent: number;
    /** Renderer processes at rest, the end against halfway: the target's process count. */
    restRendererGrowth: number;
  } | null;
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
const mib = (bytes: number): number => round(bytes / 2 ** 20);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Chromium's crash handlers re-parent to init; they name the browser's HOME in their arguments. */
function crashHandlers(browserPid: number): number[] {
  let environ = '';
  try {
    environ = readFileSync(`/proc/${browserPid}/environ`, 'utf8');
  } catch {
    return [];
  }
  const home = environ
    .split('\0')
    .find((e) => e.startsWith('TMPDIR='))
    ?.slice(7);
  return home ? processesMentioning(`--database=${home}/`) : [];
}

/**
 * PSS of `rootPid`'s tree (Node and its Chromium, or a bare Chromium) plus the crash handlers
 * of the Chromium browsers in it. `node`: the pid counted as Node (the rest is Chromium).
 */
export function readPss(rootPid: number, node: number | null): Reading {
  // One pass over the tree: the count, the kinds and the PSS are of the same processes.
  const kinds = new Map<string, number>();
  let treePss = 0;
  for (const p of processTree(rootPid)) {
    if (p.state === 'Z') continue;
    const kind = processKind(p.pid);
    if (kind === null) continue;
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    treePss += pssOf(p.pid);
  }
  let extra = 0;
  let extraProcesses = 0;
  const browsers = node === null ? [rootPid] : processesMentioning('--remote-debugging-pipe');
  for (const browser of browsers) {
    const usage = treeUsage(browser);
    if (usage.processes === 0) continue;
    if (node !== null && !isDescendant(browser, node)) continue;
    for (const pid of crashHandlers(browser)) {
      extra += pssOf(pid);
      extraProcesses++;
    }
  }
  if (extraProcesses > 0) kinds.set('crashpad', extraProcesses);
  const nodePss = node === null ? 0 : pssOf(node);
  const total = treePss + extra;
  return {
    processes: [...kinds.values()].reduce((a, b) => a + b, 0),
    kinds: [...kinds]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', '),
    renderers: kinds.get('renderer') ?? 0,
    pssMiB: mib(total),
    nodePssMiB: mib(nodePss),
    chromiumPssMiB: mib(total - nodePss),
  };
}

function isDescendant(pid: number, ancestor: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 20; i++) {
    if (p === ancestor) return true;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return false;
    }
  }
  return false;
}

/** Several readings over two seconds; the one with the median PSS. */
async function steadyReading(read: () => Reading): Promise<Reading> {
  const readings: Reading[] = [];
  for (let i = 0; i < 5; i++) {
    readings.push(read());
    await sleep(400);
  }
  readings.sort((a, b) => a.pssMiB - b.pssMiB);
  return readings[2] as Reading;
}

/**
 * REST_MS without a capture, then until `rootPid`'s process count holds still (counted from
 * status files alone, not the PSS), then steadyReading.
 */
async function readingAtRest(rootPid: number, read: () => Reading): Promise<Reading> {
  await sleep(REST_MS);
  const deadline = performance.now() + REST_CAP_MS;
  const count = () => treeUsage(rootPid).processes;
  let processes = count();
  let stillSince = performance.now();
  while (performance.now() - stillSince < SETTLED_MS && performance.now() < deadline) {
    await sleep(500);
    const now = count();
    if (now !== processes) {
      processes = now;
      stillSince = performance.now();
    }
  }
  return steadyReading(read);
}

const restReading = (r: Reading): string =>
  `${r.pssMiB} MiB PSS in ${r.processes} processes (Node ${r.nodePssMiB}, Chromium ${r.chromiumPssMiB}; ${r.kinds})`;

/** Node's heap after collection: the medians of the first and second half of the checkpoints. */
function halvesOf(heaps: number[]): {
  nodeHeapFirstHalfMiB: number;
  nodeHeapSecondHalfMiB: number;
  nodeHeapGrowthPercent: number;
} {
  const half = heaps.length >> 1;
  const first = median(heaps.slice(0, half));
  const second = median(heaps.slice(half));
  return {
    nodeHeapFirstHalfMiB: round(first),
    nodeHeapSecondHalfMiB: round(second),
    nodeHeapGrowthPercent: round((second / first - 1) * 100),
  };
}

type Capture = (url: string, i: number) => Promise<boolean>;

async function drive(
  count: number,
  concurrency: number,
  url: (i: number) => string,
  capture: Capture,
): Promise<{ elapsedMs: number; errors: number; latencies: number[] }> {
  let next = 0;
  let errors = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const t0 = performance.now();
        if (await capture(url(i), i)) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  return { elapsedMs: round(performance.now() - started), errors, latencies };
}

export async function runMemoryBench(options: MemoryBenchOptions = {}): Promise<MemoryResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const quick = options.quick ?? false;
  const loadCaptures = quick ? 24 : LOAD_CAPTURES;
  const soakCaptures = quick ? 0 : (options.soakCaptures ?? SOAK_CAPTURES);
  if (soakCaptures % SOAK_CHECKPOINTS !== 0) {
    throw new Error(
      `the soak's length must be a multiple of ${SOAK_CHECKPOINTS}, not ${soakCaptures}`,
    );
  }
  const soakStep = soakCaptures / SOAK_CHECKPOINTS;
  const site = await startBenchSites(['127.0.0.1']);
  const origin = new URL(site.urls.realistic[0] as string).origin;
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-membench-'));
  const plans = path.join(dir, 'plans.json');
  await writeFile(
    plans,
    JSON.stringify({
      free: {
        monthly_quota: 1_000_000_000,
        rate_per_minute: 1_000_000,
        concurrent_renders: CONCURRENCY,
        retention_hours: 1,
      },
    }),
  );
  let node: NodeProcess | undefined;
  let probe: HeapProbe | undefined;
  const inspectPort = await freePort();
  const tag = Date.now().toString(36);
  try {
    node = await startNode('membench', {
      EGRESS_ALLOWLIST: site.hostPorts.join(','),
      RENDER_CONCURRENCY: String(CONCURRENCY),
      PLANS_FILE: plans,
      LOG_LEVEL: 'error',
      // Only a port: the inspector opens on the soak's first heap reading (SIGUSR1).
      NODE_OPTIONS: HeapProbe.nodeOptions(inspectPort),
    });
    const keys: string[] = [];
    for (let i = 0; i < CLIENTS; i++) keys.push((await nodeAccount(node, { key: true })).key);
    const service = node;
    const captureAs =
      (shot: Record<string, unknown>): Capture =>
      async (url, i) => {
        const res = await service.fetch('/v1/screenshots', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': keys[i % CLIENTS] as string,
          },
          body: JSON.stringify({ url, ...shot }),
        });
        await res.arrayBuffer();
        if (res.status !== 201) log(`capture ${i}: ${res.status}`);
        return res.status === 201;
      };
    const capture = captureAs({ ...VIEWPORT, format: 'png' });
    const soakCapture = captureAs(SOAK_SHOT);
    // Every capture a miss: a distinct query string.
    const realistic = (prefix: string) => (i: number) =>
      `${origin}/realistic?${tag}-${prefix}-${i}`;
    const load = await drive(loadCaptures, CONCURRENCY, realistic('load'), capture);
    log(
      `service: ${loadCaptures} captures at concurrency ${CONCURRENCY} in ` +
        `${round(load.elapsedMs / 1000)} s (${load.errors} errors)`,
    );
    // Back to back (one at a time, client 0): the latency of a warm pool.
    const backToBack: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await capture(realistic('b2b')(i), 0);
      backToBack.push(round(performance.now() - t0));
    }
    const pid = node.pid;
    const atRest = await readingAtRest(pid, () => readPss(pid, pid));
    log(`service at rest: ${restReading(atRest)}`);
    const t0 = performance.now();
    await capture(realistic('after-rest')(0), 0);
    const firstAfterRestMs = round(performance.now() - t0);
    log(
      `first capture after rest ${firstAfterRestMs} ms; back to back before: ${backToBack.join(', ')} ms`,
    );

    let soak: MemoryResult['soak'] = null;
    if (soakCaptures > 0) {
      probe = new HeapProbe(pid, inspectPort);
      const checkpoints: Array<Reading & { captures: number; nodeHeapMiB: number }> = [];
      let restHalfway: Reading | undefined;
      let restedMs = 0;
      let errors = 0;
      const started = performance.now();
      const trivial = (i: number) => `${origin}/trivial?${tag}-soak-${i}`;
      for (let done = 0; done < soakCaptures; done += soakStep) {
        const step = await drive(
          Math.min(soakStep, soakCaptures - done),
          CONCURRENCY,
          (i) => trivial(done + i),
          (url, i) => soakCapture(url, done + i),
        );
        errors += step.errors;
        // The step's last pages are still being reset: read once that is over, so that each
        // checkpoint sees the pool in the same state.
        await sleep(SOAK_SETTLE_MS);
        const reading = readPss(pid, pid);
        const nodeHeapMiB = await probe.heapAfterGcMiB();
        checkpoints.push({ captures: done + soakStep, ...reading, nodeHeapMiB });
        log(
          `soak ${done + soakStep}/${soakCaptures}: ${reading.pssMiB} MiB PSS, ` +
            `${reading.processes} processes, Node heap after GC ${nodeHeapMiB} MiB`,
        );
        if (done + soakStep === soakCaptures / 2) {
          const restStarted = performance.now();
          restHalfway = await readingAtRest(pid, () => readPss(pid, pid));
          restedMs = performance.now() - restStarted;
          log(`soak halfway, at rest: ${restReading(restHalfway)}`);
        }
      }
      // The captures' time, without the rest halfway (the rest at the end comes after it).
      const elapsedMs = round(performance.now() - started - restedMs);
      const restEnd = await readingAtRest(pid, () => readPss(pid, pid));
      log(`soak end, at rest: ${restReading(restEnd)}`);
      if (!restHalfway) throw new Error('the soak took no reading halfway');
      // Medians of the halves: a leak raises the level for good, while one reading taken as
      // the pool recycles contexts (a few processes and their memory fewer for a moment)
      // must not pass for growth, nor hide it.
      const half = checkpoints.length >> 1;
      const first = median(checkpoints.slice(0, half).map((c) => c.pssMiB));
      const second = median(checkpoints.slice(half).map((c) => c.pssMiB));
      soak = {
        page: `trivial, ${SOAK_SHOT.width}x${SOAK_SHOT.height} ${SOAK_SHOT.format}`,
        captures: soakCaptures,
        elapsedMs,
        errors,
        checkpoints,
        firstHalfMiB: round(first),
        secondHalfMiB: round(second),
        growthPercent: round((second / first - 1) * 100),
        processGrowth: round(
          median(checkpoints.slice(half).map((c) => c.processes)) -
            median(checkpoints.slice(0, half).map((c) => c.processes)),
        ),
        ...halvesOf(checkpoints.map((c) => c.nodeHeapMiB)),
        restHalfway,
        restEnd,
        chromiumRestGrowthPercent: round(
          (restEnd.chromiumPssMiB / restHalfway.chromiumPssMiB - 1) * 100,
        ),
        restRendererGrowth: restEnd.renderers - restHalfway.renderers,
      };
      log(
        `soak: first half ${soak.firstHalfMiB} MiB, second half ${soak.secondHalfMiB} MiB ` +
          `(${soak.growthPercent}%), processes ${soak.processGrowth >= 0 ? '+' : ''}${soak.processGrowth}; ` +
          `Node heap after GC ${soak.nodeHeapFirstHalfMiB} -> ${soak.nodeHeapSecondHalfMiB} MiB ` +
          `(${soak.nodeHeapGrowthPercent}%); Chromium at rest ${restHalfway.chromiumPssMiB} -> ` +
          `${restEnd.chromiumPssMiB} MiB (${soak.chromiumRestGrowthPercent}%), processes ` +
          `${restHalfway.processes} -> ${restEnd.processes} (renderers ${restHalfway.renderers} -> ` +
          `${restEnd.renderers})`,
      );
    }
    probe?.close();
    probe = undefined;
    await node.stop();
    node = undefined;

    const baseline = await runBaseline(loadCaptures, realistic('baseline'));
    log(
      `baseline (puppeteer, new context per capture) at rest: ${baseline.atRest.pssMiB} MiB PSS ` +
        `in ${baseline.atRest.processes} processes`,
    );
    return {
      load: { captures: loadCaptures, elapsedMs: load.elapsedMs, errors: load.errors },
      atRest,
      baseline,
      targetMet: atRest.pssMiB * 2 ** 20 <= TARGET_BYTES,
      firstAfterRestMs,
      backToBackMs: backToBack,
      soak,
    };
  } finally {
    probe?.close();
    await node?.stop();
    await site.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A plain puppeteer browser, a new context per capture, the same work; then the same rest. */
async function runBaseline(
  count: number,
  url: (i: number) => string,
): Promise<MemoryResult['baseline']> {
  const browser = await launchBaselineBrowser();
  try {
    const run = await drive(count, CONCURRENCY, url, async (target) => {
      const context = await browser.createBrowserContext();
      try {
        const page = await context.newPage();
        await page.setViewport({ ...VIEWPORT, deviceScaleFactor: 1 });
        await page.goto(target, { waitUntil: 'load' });
        await page.screenshot({ type: 'png' });
        return true;
      } finally {
        await context.close();
      }
    });
    const pid = browser.process()?.pid as number;
    const atRest = await readingAtRest(pid, () => readPss(pid, null));
    return { atRest, captures: count, elapsedMs: run.elapsedMs };
  } finally {
    await browser.close();
  }
}

if (import.meta.main) {
  const result = await runMemoryBench({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
