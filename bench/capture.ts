/**
 * Capture throughput of the Chromium renderer against two plain puppeteer-core loops measured
 * in the same run, on the same machine, with the same Chromium flags:
 *   - fresh: a new isolated context + page per capture (full isolation, the slow way);
 *   - floor: one reused page per worker, nothing reset (no isolation; the upper bound).
 * Targets (concurrency 2): renderer >= 2x fresh, >= 0.6x floor.
 *
 * The page is trivial and served on several loopback addresses (127.0.0.1, .2, .3), so
 * consecutive captures cross sites. A soak of 500 captures then checks that the browser's
 * process count does not grow and its RSS stays within 20%.
 *
 *   ./node_modules/.bin/node bench/capture.ts [--no-soak] [--captures=N]
 */
import { join } from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { launch } from 'puppeteer-core';
import { chromiumArgs } from '../src/adapters/browser/browser-instance.ts';
import { createChromiumRenderer } from '../src/adapters/browser/chromium-renderer.ts';
import { findChromium, launchableBinary } from '../src/adapters/browser/find-chromium.ts';
import { processesMentioning, type TreeUsage, treeUsage } from '../src/adapters/browser/proc.ts';
import type { Renderer, RenderOptions } from '../src/domain/captures/renderer.ts';
import { longDataDir, removeDataDir } from '../test/helpers/data-dir.ts';
import { type FixtureSite, page as html, startSite } from '../test/helpers/fixtures.ts';

const HOSTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
const VIEWPORT = { width: 1280, height: 720 };
const ROUNDS = 4;
const WARMUP = 6;
const SOAK_CAPTURES = 500;
/** Captures between two process-count readings during the soak. */
const SOAK_STEP = 25;
const TRIVIAL = html('<h1>Hello</h1><p>A trivial page for the capture benchmark.</p>');

export interface CaptureBenchOptions {
  /** Measured captures per mode and round. Default 30. */
  captures?: number;
  /** Run the 500-capture soak. Default true. */
  soak?: boolean;
  log?: (line: string) => void;
}

interface ModeStats {
  captures: number;
  throughputPerSec: number;
  medianMs: number;
  p95Ms: number;
}

type CaptureFn = (url: string, worker: number) => Promise<void>;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

/** Runs `count` captures with `concurrency` workers, round-robin over the sites. */
async function drive(
  urls: string[],
  count: number,
  concurrency: number,
  capture: CaptureFn,
): Promise<{ latencies: number[]; elapsedMs: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const t0 = performance.now();
        await capture(urls[i % urls.length] as string, worker);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { latencies, elapsedMs: performance.now() - started };
}

function summarize(runs: Array<{ latencies: number[]; elapsedMs: number }>): ModeStats {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const elapsed = runs.reduce((sum, r) => sum + r.elapsedMs, 0);
  return {
    captures: latencies.length,
    throughputPerSec: round((latencies.length / elapsed) * 1000),
    medianMs: round(percentile(latencies, 50)),
    p95Ms: round(percentile(latencies, 95)),
  };
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

function renderOptions(url: string): RenderOptions {
  return {
    url,
    format: 'png',
    quality: 80,
    ...VIEWPORT,
    fullPage: false,
    deviceScaleFactor: 1,
    waitUntil: 'load',
    delay: 0,
    waitForSelector: null,
    selector: null,
    darkMode: false,
    reducedMotion: false,
    hideSelectors: [],
    maxWidth: 3840,
    omitBackground: false,
  };
}

const rendererCapture =
  (renderer: Renderer): CaptureFn =>
  async (url) => {
    await renderer.render(renderOptions(url), { deadline: Date.now() + 30_000 });
  };

async function plainPage(browser: Browser): Promise<{ page: Page; close(): Promise<void> }> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  await page.setViewport({ ...VIEWPORT, deviceScaleFactor: 1 });
  return { page, close: () => context.close() };
}

/** The same work a capture needs, without any isolation or settling. */
async function plainShot(page: Page, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'load' });
  await page.screenshot({ type: 'png' });
}

const freshCapture =
  (browser: Browser): CaptureFn =>
  async (url) => {
    const { page, close } = await plainPage(browser);
    try {
      await plainShot(page, url);
    } finally {
      await close();
    }
  };

function floorCapture(pages: Page[]): CaptureFn {
  return (url, worker) => plainShot(pages[worker] as Page, url);
}

export async function runCaptureBench(options: CaptureBenchOptions = {}): Promise<object> {
  const log = options.log ?? ((line: string) => console.log(line));
  const count = options.captures ?? 30;
  const executable = findChromium();
  if (executable === null) throw new Error('Chromium not found: set CHROME_PATH');
  const dataDir = await longDataDir('capture-bench');
  const sites: FixtureSite[] = [];
  let renderer: Renderer | undefined;
  let browser: Browser | undefined;
  try {
    for (const host of HOSTS) sites.push(await startSite({ '/': TRIVIAL }, host));
    const urls = sites.map((s) => `${s.origin}/`);
    renderer = await createChromiumRenderer({
      dataDir,
      concurrency: 2,
      queueSize: 100,
      maxPageHeight: 16_384,
    });
    browser = await launch({
      executablePath: launchableBinary(executable),
      headless: true,
      pipe: true,
      args: chromiumArgs({ root: process.getuid?.() === 0 }),
      ignoreDefaultArgs: ['--disable-popup-blocking'],
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    const floorPages = [await plainPage(browser), await plainPage(browser)];
    const modes: Record<string, CaptureFn> = {
      renderer: rendererCapture(renderer),
      fresh: freshCapture(browser),
      floor: floorCapture(floorPages.map((p) => p.page)),
    };
    const runs: Record<string, Array<{ latencies: number[]; elapsedMs: number }>> = {};
    for (const capture of Object.values(modes)) await drive(urls, WARMUP, 2, capture);
    // Short rounds interleave the modes (in a rotating order) so that drift and the load of
    // other processes on the machine hit all of them alike; ratios are taken per round, between
    // runs measured minutes apart at most, and their median is reported.
    const names = Object.keys(modes);
    for (let r = 0; r < ROUNDS; r++) {
      for (const concurrency of [1, 2]) {
        for (let i = 0; i < names.length; i++) {
          const name = names[(i + r) % names.length] as string;
          const key = `${name}@${concurrency}`;
          const run = await drive(urls, count, concurrency, modes[name] as CaptureFn);
          runs[key] = [...(runs[key] ?? []), run];
        }
      }
      log(`round ${r + 1}/${ROUNDS} done`);
    }
    const results: Record<string, ModeStats> = {};
    for (const [key, value] of Object.entries(runs)) results[key] = summarize(value);
    const roundRate = (key: string, r: number): number => {
      const run = runs[key]?.[r];
      return run ? run.latencies.length / run.elapsedMs : 0;
    };
    const ratio = (a: string, b: string): number => {
      const perRound = Array.from({ length: ROUNDS }, (_, r) => roundRate(a, r) / roundRate(b, r));
      return round(
        percentile(
          perRound.sort((x, y) => x - y),
          50,
        ),
      );
    };
    const ratios = {
      sequentialVsFresh: ratio('renderer@1', 'fresh@1'),
      sequentialVsFloor: ratio('renderer@1', 'floor@1'),
      concurrent2VsFresh: ratio('renderer@2', 'fresh@2'),
      concurrent2VsFloor: ratio('renderer@2', 'floor@2'),
    };
    const targets = {
      concurrent2AtLeast2xFresh: ratios.concurrent2VsFresh >= 2,
      concurrent2AtLeast06xFloor: ratios.concurrent2VsFloor >= 0.6,
    };
    log('mode            captures  captures/s  median ms  p95 ms');
    for (const [key, s] of Object.entries(results)) {
      log(
        `${key.padEnd(16)}${String(s.captures).padStart(8)}${String(s.throughputPerSec).padStart(12)}` +
          `${String(s.medianMs).padStart(11)}${String(s.p95Ms).padStart(8)}`,
      );
    }
    log(`ratios (median of ${ROUNDS} rounds): ${JSON.stringify(ratios)}`);
    log(`targets met: ${JSON.stringify(targets)}`);
    for (const p of floorPages) await p.close();
    await browser.close();
    browser = undefined;

    let soak: object | null = null;
    if (options.soak !== false) {
      soak = await runSoak(renderer, urls, dataDir, log);
    }
    return { viewport: VIEWPORT, rounds: ROUNDS, results, ratios, targets, soak };
  } finally {
    await browser?.close().catch(() => {});
    await renderer?.close();
    for (const site of sites) await site.close();
    await removeDataDir(dataDir);
  }
}

/** The renderer's browser: the process whose command line holds our data dir's profile. */
function rendererBrowserPid(dataDir: string): number | null {
  const pids = processesMentioning(join(dataDir, 'chromium'));
  // The browser process is the group leader of the others.
  for (const pid of pids) {
    const usage = treeUsage(pid);
    if (usage.processes > 1) return pid;
  }
  return null;
}

async function runSoak(
  renderer: Renderer,
  urls: string[],
  dataDir: string,
  log: (line: string) => void,
): Promise<object> {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // Chromium starts and ends renderer processes on its own (a spare renderer, one per site),
  // so one reading can be off by one either way. Each end of the soak is read five times over
  // two idle seconds and the smallest reading kept: the steady state, which a leak raises.
  const steady = async (pid: number | null): Promise<TreeUsage | null> => {
    if (pid === null) return null;
    let best: TreeUsage | null = null;
    for (let i = 0; i < 5; i++) {
      await sleep(400);
      const u = treeUsage(pid);
      if (best === null || u.processes < best.processes) best = u;
    }
    return best;
  };
  await sleep(1_000);
  const before = rendererBrowserPid(dataDir);
  const start = await steady(before);
  const checkpoints: number[] = [];
  const started = performance.now();
  for (let done = 0; done < SOAK_CAPTURES; done += SOAK_STEP) {
    await drive(urls, Math.min(SOAK_STEP, SOAK_CAPTURES - done), 2, rendererCapture(renderer));
    const pid = rendererBrowserPid(dataDir);
    checkpoints.push(pid === null ? -1 : treeUsage(pid).processes);
    if ((done + SOAK_STEP) % 100 === 0) {
      log(`soak: ${done + SOAK_STEP}/${SOAK_CAPTURES} captures, ${checkpoints.at(-1)} processes`);
    }
  }
  const result = { elapsedMs: performance.now() - started };
  const after = rendererBrowserPid(dataDir);
  const end = await steady(after);
  const growth = (pick: (u: TreeUsage) => number): number | null =>
    start && end ? round(pick(end) / pick(start) - 1, 3) : null;
  const half = Math.floor(checkpoints.length / 2);
  const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const rssGrowth = growth((u) => u.rssBytes);
  const anonGrowth = growth((u) => u.anonBytes);
  const mib = (u: TreeUsage | null) =>
    u && {
      processes: u.processes,
      rssMiB: round(u.rssBytes / 2 ** 20, 1),
      anonMiB: round(u.anonBytes / 2 ** 20, 1),
    };
  const soak = {
    captures: SOAK_CAPTURES,
    throughputPerSec: round((SOAK_CAPTURES / result.elapsedMs) * 1000),
    sameBrowser: before === after,
    start: mib(start),
    end: mib(end),
    rssGrowth,
    anonGrowth,
    processesAtCheckpoints: checkpoints,
    // Renderer processes come and go by one or two as contexts are recycled (every 50
    // captures), so single readings are noise; a leak shows as a higher level in the second
    // half of the run than in the first (one process kept per recycle would be +5 here).
    processesGrew: mean(checkpoints.slice(half)) - mean(checkpoints.slice(0, half)) >= 1,
    rssWithin20Percent: rssGrowth === null ? null : Math.abs(rssGrowth) <= 0.2,
    anonWithin20Percent: anonGrowth === null ? null : Math.abs(anonGrowth) <= 0.2,
    rendererStats: renderer.stats(),
  };
  log(`soak: ${JSON.stringify(soak)}`);
  return soak;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const capturesArg = args.find((a) => a.startsWith('--captures='));
  await runCaptureBench({
    soak: !args.includes('--no-soak'),
    ...(capturesArg ? { captures: Number(capturesArg.split('=')[1]) } : {}),
  });
}
