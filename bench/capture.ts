/**
 * Capture speed of the service's renderer (Chromium pool, isolated contexts, egress proxy)
 * against two plain puppeteer-core loops measured in the same run, on the same machine, with
 * the same Chromium flags and the same encoder settings:
 *   - fresh: a new isolated context + page per capture (full isolation, the slow way; first
 *     round only);
 *   - floor: one reused page per worker, nothing reset (no isolation; the upper bound);
 *   - leave: the floor's reused page, sent to about:blank after each capture: the least any
 *     reset of a reused page needs (the page's document must be gone before its storage can
 *     be cleared), none of the clearing itself. Its ratio to the floor is how close to the
 *     floor a renderer that isolates captures on reused pages can come on this machine.
 * Two pages (bench/fixtures/site.ts): a trivial one and a realistic one (185 KB of HTML, a
 * stylesheet, a web font, a script, 16 images, 3,033 px tall), both served on 127.0.0.1, .2
 * and .3 so consecutive captures cross sites; 1280x800 PNG viewport captures; 1, 2 and 4
 * client workers (the renderer's pool has RENDER_CONCURRENCY's default of two slots per core;
 * BENCH_SLOTS=N sets another count to compare).
 *
 * Short rounds interleave every (page, concurrency, mode) cell in a rotating order, so drift
 * and the load of other processes hit all modes alike; each ratio is taken per round and the
 * median reported. Then:
 *   - the full service (HTTP POST /v1/screenshots, every capture a cache miss) beside the floor;
 *   - the encoder table: Page.captureScreenshot of the loaded realistic page with each
 *     candidate setting, time and bytes;
 *   - the engine table: the renderer on the headless shell against the same renderer on the
 *     full browser, both pages at concurrency 2, interleaved (target ENGINE_TARGET; the floor
 *     and `leave` above run on the engine the renderer runs, findChromium's first: the shell);
 *   - the blocking table: the realistic page with each blocking flag (and all three), and a
 *     full page of it, beside the plain capture, interleaved (BLOCKING_VARIANTS);
 *   - a soak (trivial page) that checks the browser's process count and memory stay flat (when run
 *     alone; `npm run bench` leaves it to the memory part's 1,000-capture soak).
 *
 * Targets, against the isolating floor (`leave`: the reference for a service that isolates
 * captures on reused pages, not a page that resets nothing): the renderer's throughput at
 * least LEAVE_TARGET of it at concurrency 2 and 4 on both pages, its CPU per capture at most
 * CPU_TARGET of it on both pages; and its throughput at concurrency 4 not below that at 2
 * (beyond 5% of noise). The floor's columns stay as the upper bound.
 *
 *   ./node_modules/.bin/node bench/capture.ts [--quick] [--no-soak]
 */
import { join } from 'node:path';
import type { Browser, CDPSession, Page } from 'puppeteer-core';
import { createBrowserRenderer } from '../src/adapters/browser/index.ts';
import { encoderSettings } from '../src/adapters/browser/page/output/encoding.ts';
import { findChromium } from '../src/adapters/browser/process/find-chromium.ts';
import {
  processesMentioning,
  processKind,
  processTree,
  type TreeUsage,
  treeUsage,
} from '../src/adapters/browser/process/proc.ts';
import { createEgress } from '../src/adapters/egress/guard.ts';
import { defaultRenderConcurrency } from '../src/config/config.ts';
import type { OperatorProxy } from '../src/config/proxies-file.ts';
import { resolveCaptureOptions } from '../src/domain/captures/capture-options.ts';
import { parseProxyUrl } from '../src/domain/captures/proxy-url.ts';
import type { ImageFormat, Renderer, RenderOptions } from '../src/domain/captures/renderer.ts';
import { DEFAULT_PLANS } from '../src/domain/plans.ts';
import { silentLogger } from '../src/lib/logger.ts';
import { newApiKey } from '../test/helpers/accounts.ts';
import { startApp, type TestApp } from '../test/helpers/app.ts';
import { longDataDir, removeDataDir } from '../test/helpers/data-dir.ts';
import { startHttpProxy, type TestProxy } from '../test/helpers/proxies.ts';
import { renderSettings } from '../test/helpers/render-settings.ts';
import { launchBaselineBrowser } from './fixtures/baseline-browser.ts';
import { type BenchSites, REALISTIC_HEIGHT, startBenchSites } from './fixtures/site.ts';
import { median, percentile } from './stats.ts';

const HOSTS = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];
const VIEWPORT = { width: 1280, height: 800 };
const PAGE_NAMES = ['trivial', 'realistic'] as const;
type PageName = (typeof PAGE_NAMES)[number];
const CONCURRENCIES = [1, 2, 4] as const;
const MODES = ['renderer', 'floor', 'leave', 'fresh'] as const;
type Mode = (typeof MODES)[number];
/** Renderer slots: RENDER_CONCURRENCY's default (two per core), or BENCH_SLOTS to compare. */
const SLOTS = Number(process.env.BENCH_SLOTS ?? defaultRenderConcurrency());
/** Renderer throughput / the isolating floor's, at concurrency 2 and 4. */
const LEAVE_TARGET = 0.85;
/** Renderer CPU per capture / the isolating floor's (every part: Node and Chromium). */
const CPU_TARGET = 1.1;
/** Concurrencies the throughput target counts at: one per slot and beyond. */
const TARGET_CONCURRENCIES = [2, 4];
/** c4 / c2 of the renderer's throughput must be at least this (1, less 5% of noise). */
const SCALING_TARGET = 0.95;
/** The renderer on the headless shell / the same renderer on the full browser (captures/s). */
const ENGINE_TARGET = 1.3;
/** The two engines of the engine table (docs/engine.md). */
const ENGINE_PATHS = {
  shell: '/usr/bin/chromium-headless-shell',
  full: '/usr/bin/chromium',
} as const;
const SOAK_CAPTURES = 500;
/** Captures between two process-count readings during the soak. */
const SOAK_STEP = 25;
/** The interleaved rounds stop early (after two at least) rather than run past this. */
const ROUNDS_BUDGET_MS = 90_000;
/** Failure messages kept for the report (all failures are counted). */
const MAX_FAILURE_MESSAGES = 10;

interface Plan {
  rounds: number;
  /** Measured captures per cell and round, by page. */
  captures: Record<PageName, number>;
  serviceRounds: number;
  serviceCaptures: Record<PageName, number>;
  encodeReps: number;
  soak: boolean;
  /** Rounds of the blocking table, and captures per variant and round. */
  blockingRounds: number;
  blockingCaptures: number;
  /** Rounds of the resize table, and captures per variant and round (at concurrency 2). */
  resizeRounds: number;
  resizeCaptures: number;
  /** Rounds of the engine table, and captures per engine, page and round (concurrency 2). */
  engineRounds: number;
  engineCaptures: Record<PageName, number>;
}

// Sized so that the whole `npm run bench` stays under ten minutes on two cores: more rounds
// of fewer captures rather than the reverse (the ratios are taken per round).
const FULL: Plan = {
  rounds: 4,
  captures: { trivial: 5, realistic: 4 },
  serviceRounds: 1,
  serviceCaptures: { trivial: 8, realistic: 4 },
  encodeReps: 5,
  soak: true,
  blockingRounds: 1,
  blockingCaptures: 2,
  resizeRounds: 4,
  resizeCaptures: 6,
  engineRounds: 4,
  engineCaptures: { trivial: 8, realistic: 6 },
};
const QUICK: Plan = {
  rounds: 2,
  captures: { trivial: 4, realistic: 4 },
  serviceRounds: 1,
  serviceCaptures: { trivial: 4, realistic: 4 },
  encodeReps: 2,
  soak: false,
  blockingRounds: 1,
  blockingCaptures: 2,
  resizeRounds: 2,
  resizeCaptures: 4,
  engineRounds: 2,
  engineCaptures: { trivial: 4, realistic: 4 },
};

export interface CaptureBenchOptions {
  /** Fewer rounds and captures, no soak: checks the harness, rough figures. */
  quick?: boolean;
  /** Run the 500-capture soak (default: yes, unless quick). */
  soak?: boolean;
  log?: (line: string) => void;
}

export interface Stats {
  captures: number;
  throughputPerSec: number;
  medianMs: number;
  p95Ms: number;
}

interface Run {
  latencies: number[];
  elapsedMs: number;
  /** CPU time the run took, by part (ms), when its browser could be read before and after. */
  cpu?: CpuParts;
}

const CPU_PARTS = ['node', 'browser', 'gpu', 'network', 'renderers'] as const;
type CpuPart = (typeof CPU_PARTS)[number];
/**
 * CPU time in ms: `node` is this process (the renderer's Node side, the puppeteer clients and
 * the fixture servers, the same for every mode), the rest one browser's process tree.
 */
type CpuParts = Record<CpuPart, number>;
/**
 * CPU time of a browser's tree so far, by part. `renderers` is everything else: the renderer
 * processes, live and exited (an exited process's time moves to its parent's children's time
 * once reaped, so only the sum of the parts that hold them is steady), the zygotes, other
 * utilities.
 */
function browserCpu(rootPid: number): Omit<CpuParts, 'node'> {
  const out = { browser: 0, gpu: 0, network: 0, renderers: 0 };
  for (const p of processTree(rootPid)) {
    const kind = p.pid === rootPid ? 'browser' : processKind(p.pid);
    const own = p.cpuMs;
    if (kind === 'browser') out.browser += own;
    else if (kind === 'gpu-process') out.gpu += own;
    else if (kind === 'utility:network') out.network += own;
    else out.renderers += own;
    out.renderers += p.exitedChildrenCpuMs;
  }
  return out;
}

function cpuNow(rootPid: number): CpuParts {
  const node = process.cpuUsage();
  return { node: (node.user + node.system) / 1000, ...browserCpu(rootPid) };
}

/** CPU per capture of a set of runs, by part, with the total. */
function cpuPerCapture(runs: Run[]): (CpuParts & { total: number }) | null {
  const measured = runs.filter((r) => r.cpu !== undefined);
  const captures = measured.reduce((n, r) => n + r.latencies.length, 0);
  if (captures === 0) return null;
  const out = { total: 0 } as CpuParts & { total: number };
  for (const part of CPU_PARTS) {
    out[part] = round(measured.reduce((sum, r) => sum + (r.cpu?.[part] ?? 0), 0) / captures, 1);
    out.total += out[part];
  }
  out.total = round(out.total, 1);
  return out;
}

type CaptureFn = (url: string, worker: number) => Promise<void>;

export interface EncodingRow {
  format: ImageFormat;
  setting: string;
  /** What the service uses by default for this format. */
  chosen: boolean;
  msPerCapture: number;
  bytes: number;
}

export interface CaptureBenchResult {
  blocking: BlockingRow[];
  resize: ResizeRow[];
  /** The realistic page by its URL and as `html` (its own document). */
  documents: ResizeRow[];
  /** The realistic page direct and through a local HTTP proxy (docs/proxies.md). */
  proxied?: ResizeRow[];
  viewport: typeof VIEWPORT;
  slots: number;
  plan: Plan;
  /** Interleaved rounds actually run (the time budget may cut them short). */
  rounds: number;
  realisticBytes: number;
  realisticHeight: number | null;
  /** page -> concurrency -> mode -> stats, with the per-round median ratios. */
  cells: Record<
    string,
    Record<
      string,
      {
        stats: Record<Mode, Stats>;
        vsFloor: number;
        vsFresh: number;
        /** The renderer against the floor that leaves its page after each capture. */
        vsLeave: number;
        /** That floor against the plain one: the most a resetting renderer can reach. */
        leaveVsFloor: number;
        /** The renderer's wait for the page at rest, ms per capture (every round). */
        settle: { p50: number; p95: number; captures: number };
      }
    >
  >;
  /**
   * page -> mode -> CPU time per capture (ms) by part, over every concurrency's runs; null
   * where no run could be read.
   */
  cpu: Record<string, Record<string, (CpuParts & { total: number }) | null>>;
  /** page -> renderer c4/c2 throughput (median of per-round ratios). */
  scaling: Record<string, number>;
  service: Record<
    string,
    { concurrency: number; service: Stats; floor: Stats; vsFloor: number }
  > | null;
  encoding: EncodingRow[];
  /** The same renderer on each engine, interleaved (null: one of them is not installed). */
  engines: EngineRow[] | null;
  targets: Array<{
    name: string;
    value: number;
    threshold: number;
    met: boolean;
    /** The value must be at most the threshold (else at least). */
    atMost?: boolean;
    /** What is printed beside it (the settle wait of the captures it counts). */
    beside?: string;
  }>;
  soak: object | null;
  failedCaptures: number;
  failures: string[];
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Counts failed captures and keeps the first messages; a failed capture fails the bench. */
class Failures {
  count = 0;
  readonly messages: string[] = [];

  add(what: string, err: unknown): void {
    this.count++;
    if (this.messages.length < MAX_FAILURE_MESSAGES) {
      this.messages.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * Runs `count` captures with `concurrency` workers, round-robin over the URLs. A failed
 * capture is counted (and fails the benchmark) but does not stop the run.
 */
async function drive(
  urls: string[],
  count: number,
  concurrency: number,
  capture: CaptureFn,
  failures: Failures,
  label: string,
  cpuRoot?: () => number | null,
): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const root = cpuRoot?.() ?? null;
  const cpuBefore = root === null ? null : cpuNow(root);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        const t0 = performance.now();
        try {
          await capture(urls[i % urls.length] as string, worker);
          latencies.push(performance.now() - t0);
        } catch (err) {
          failures.add(label, err);
        }
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  if (cpuBefore === null || root === null) return { latencies, elapsedMs };
  // Read before finding the browser again: finding the renderer's scans /proc, which the
  // run's Node time must not include.
  const after = cpuNow(root);
  // A browser replaced during the run (the renderer recycles its own) leaves the reading out.
  if (cpuRoot?.() !== root) return { latencies, elapsedMs };
  const cpu = Object.fromEntries(
    CPU_PARTS.map((part) => [part, after[part] - cpuBefore[part]]),
  ) as CpuParts;
  return { latencies, elapsedMs, cpu };
}

function summarize(runs: Run[]): Stats {
  const latencies = runs.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const elapsed = runs.reduce((sum, r) => sum + r.elapsedMs, 0);
  return {
    captures: latencies.length,
    throughputPerSec: round((latencies.length / Math.max(1, elapsed)) * 1000),
    medianMs: round(percentile(latencies, 50), 1),
    p95Ms: round(percentile(latencies, 95), 1),
  };
}

const rate = (run: Run | undefined): number =>
  run && run.elapsedMs > 0 ? run.latencies.length / run.elapsedMs : 0;

/** Median over rounds of a's throughput / b's, each pair measured in the same round. */
function ratio(a: Run[], b: Run[]): number {
  const perRound = a.map((run, r) => rate(run) / rate(b[r])).filter(Number.isFinite);
  return round(median(perRound));
}

/** Every option at its default (the option table's, on the Pro plan), the bench's viewport. */
const DEFAULTS: RenderOptions = resolveCaptureOptions(
  { url: 'https://example.com/' },
  new URL('https://example.com/'),
  DEFAULT_PLANS.pro,
).render;

function renderOptions(url: string): RenderOptions {
  return { ...DEFAULTS, url, ...VIEWPORT, format: 'png', quality: 80, maxWidth: 3840 };
}

/** The settle waits (ms) of the renderer's captures, collected while a cell runs. */
let settleWaits: number[] | null = null;

const rendererCapture =
  (renderer: Renderer, extra: Partial<RenderOptions> = {}): CaptureFn =>
  async (url) => {
    const result = await renderer.render(
      { ...renderOptions(url), ...extra },
      { deadline: Date.now() + 60_000 },
    );
    settleWaits?.push(result.settleMs);
  };

/** The blocking flags' rows, each beside the plain capture of the same page. */
const BLOCKING_VARIANTS: ReadonlyArray<readonly [string, Partial<RenderOptions>]> = [
  ['plain', {}],
  ['block_ads', { blockAds: true }],
  ['block_trackers', { blockTrackers: true }],
  ['block_cookie_banners', { blockCookieBanners: true }],
  ['all three', { blockAds: true, blockTrackers: true, blockCookieBanners: true }],
  ['full page', { fullPage: true }],
  [
    'full page, all three',
    { fullPage: true, blockAds: true, blockTrackers: true, blockCookieBanners: true },
  ],
];

export interface BlockingRow {
  variant: string;
  stats: Stats;
  /** Median over rounds of this variant's median time / the plain capture's, same round. */
  vsPlain: number;
}

/**
 * The realistic page captured with each blocking flag, one capture at a time, the variants
 * interleaved in each round (their order rotated) so that the machine's drift falls on all
 * alike. The page has no ads, trackers or banner: the rows are what the mechanisms cost (the
 * request filter's round trip per request, the element-hiding lookup, the consent search).
 */
async function blockingTable(
  renderer: Renderer,
  url: string,
  plan: Plan,
  failures: Failures,
  log: (line: string) => void,
): Promise<BlockingRow[]> {
  // The first blocking capture compiles or loads the lists: not measured.
  for (const [name, extra] of BLOCKING_VARIANTS) {
    await drive(
      [url],
      1,
      1,
      rendererCapture(renderer, extra),
      failures,
      `blocking ${name} warm-up`,
    );
  }
  const runs = new Map<string, Run[]>(BLOCKING_VARIANTS.map(([name]) => [name, []]));
  for (let r = 0; r < plan.blockingRounds; r++) {
    for (let i = 0; i < BLOCKING_VARIANTS.length; i++) {
      const [name, extra] = BLOCKING_VARIANTS[
        (i + r) % BLOCKING_VARIANTS.length
      ] as (typeof BLOCKING_VARIANTS)[number];
      const run = await drive(
        [url],
        plan.blockingCaptures,
        1,
        rendererCapture(renderer, extra),
        failures,
        `blocking ${name}`,
      );
      runs.get(name)?.push(run);
    }
    log(`capture: blocking round ${r + 1}/${plan.blockingRounds} done`);
  }
  const plain = runs.get('plain') ?? [];
  return BLOCKING_VARIANTS.map(([name]) => {
    const own = runs.get(name) ?? [];
    const perRound = own
      .map((run, r) => median(run.latencies) / median(plain[r]?.latencies ?? []))
      .filter(Number.isFinite);
    return { variant: name, stats: summarize(own), vsPlain: round(median(perRound)) };
  });
}

/** The resize table's variants: the full-size capture, then smaller images of the same frame. */
const RESIZE_VARIANTS: ReadonlyArray<readonly [string, Partial<RenderOptions>]> = [
  ['full size', {}],
  ['image_width 400', { imageWidth: 400 }],
  ['400 x 300, cover', { imageWidth: 400, imageHeight: 300 }],
  ['400 x 300, fill', { imageWidth: 400, imageHeight: 300, imageFit: 'fill' }],
];
/** A thumbnail costs at most this much CPU per capture of the full-size image's. */
const THUMBNAIL_CPU_TARGET = 1.05;

export interface ResizeRow {
  variant: string;
  stats: Stats;
  /** CPU time per capture (ms), every part, over the rounds. */
  cpuMs: number;
  /** Median over rounds of this variant's CPU per capture / the full-size one's, same round. */
  vsFull: number;
}

/**
 * Variants of one capture of the realistic page, two at a time, interleaved in each round
 * (their order rotated), with the CPU each takes per capture (the renderer's browser and this
 * process), against the first variant of the same round. The resize table: the browser draws
 * a thumbnail at its size, `fill` is drawn then stretched by sharp. The document table: the
 * page's own HTML sent as `html` (answered by the browser at its address) beside the URL.
 */
async function cpuTable(
  renderer: Renderer,
  url: string,
  dataDir: string,
  plan: Plan,
  failures: Failures,
  log: (line: string) => void,
  table: { name: string; variants: ReadonlyArray<readonly [string, Partial<RenderOptions>]> },
): Promise<ResizeRow[]> {
  const { variants } = table;
  for (const [name, extra] of variants) {
    await drive(
      [url],
      2,
      2,
      rendererCapture(renderer, extra),
      failures,
      `${table.name} ${name} warm-up`,
    );
  }
  const runs = new Map<string, Run[]>(variants.map(([name]) => [name, []]));
  for (let r = 0; r < plan.resizeRounds; r++) {
    for (let i = 0; i < variants.length; i++) {
      const [name, extra] = variants[(i + r) % variants.length] as (typeof variants)[number];
      const run = await drive(
        [url],
        plan.resizeCaptures,
        2,
        rendererCapture(renderer, extra),
        failures,
        `${table.name} ${name}`,
        () => rendererBrowserPid(dataDir),
      );
      runs.get(name)?.push(run);
    }
    log(`capture: ${table.name} round ${r + 1}/${plan.resizeRounds} done`);
  }
  const perCapture = (run: Run | undefined) =>
    run?.cpu === undefined
      ? Number.NaN
      : CPU_PARTS.reduce((sum, part) => sum + (run.cpu?.[part] ?? 0), 0) / run.latencies.length;
  const base = runs.get(variants[0]?.[0] ?? '') ?? [];
  return variants.map(([name]) => {
    const own = runs.get(name) ?? [];
    const perRound = own
      .map((run, r) => perCapture(run) / perCapture(base[r]))
      .filter(Number.isFinite);
    return {
      variant: name,
      stats: summarize(own),
      cpuMs: round(cpuPerCapture(own)?.total ?? Number.NaN, 1),
      vsFull: round(median(perRound)),
    };
  });
}

/** A capture through a local proxy costs at most this much CPU of the same capture direct. */
const PROXY_CPU_TARGET = 1.15;

/** The proxy table's variants: straight out, then through the bench's operator proxy. */
const PROXY_VARIANTS: ReadonlyArray<readonly [string, Partial<RenderOptions>]> = [
  ['direct', {}],
  ['through a local HTTP proxy', { proxy: { kind: 'operator', id: 'bench' } }],
];

/** The bench's operator proxy (PROXIES_FILE's shape, parsed). */
function benchProxy(url: string): OperatorProxy {
  return {
    id: 'bench',
    address: parseProxyUrl(url, 'url'),
    countries: [],
    bypass: [],
    remoteDns: false,
    ca: null,
  };
}

/** An html capture of a page's document costs at most this much CPU of the URL capture's. */
const DOCUMENT_CPU_TARGET = 1;

/** The document table's variants: the page by its URL, then its HTML sent at that address. */
async function documentVariants(
  url: string,
): Promise<ReadonlyArray<readonly [string, Partial<RenderOptions>]>> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  const html = await res.text();
  return [
    ['url', {}],
    ['html (its document)', { html }],
  ];
}

interface PlainPage {
  page: Page;
  cdp: CDPSession;
  close(): Promise<void>;
}

async function plainPage(browser: Browser): Promise<PlainPage> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  const cdp = await page.createCDPSession();
  // Device metrics on the session the screenshot goes through, as the renderer does.
  await cdp.send('Emulation.setDeviceMetricsOverride', {
    ...VIEWPORT,
    deviceScaleFactor: 1,
    mobile: false,
    screenWidth: VIEWPORT.width,
    screenHeight: VIEWPORT.height,
  });
  return { page, cdp, close: () => context.close() };
}

/** The same load and encoding a capture needs, without any isolation or settling. */
async function plainShot(p: PlainPage, url: string): Promise<void> {
  await p.page.goto(url, { waitUntil: 'load' });
  const shot = await p.cdp.send('Page.captureScreenshot', {
    ...encoderSettings('png', 80),
    captureBeyondViewport: false,
  });
  if (shot.data.length === 0) throw new Error('empty screenshot');
}

const freshCapture =
  (browser: Browser): CaptureFn =>
  async (url) => {
    const p = await plainPage(browser);
    try {
      await plainShot(p, url);
    } finally {
      await p.close();
    }
  };

function floorCapture(pages: PlainPage[]): CaptureFn {
  return (url, worker) => plainShot(pages[worker] as PlainPage, url);
}

/** The floor, its page then sent to about:blank (what the renderer's reset starts with). */
function leaveCapture(pages: PlainPage[]): CaptureFn {
  return async (url, worker) => {
    const p = pages[worker] as PlainPage;
    await plainShot(p, url);
    await p.page.goto('about:blank', { waitUntil: 'load' });
  };
}

/** The service's capture: an HTTP POST with an API key, a unique URL so it always renders. */
function serviceCapture(app: TestApp, key: string): CaptureFn {
  let n = 0;
  return async (url) => {
    const res = await fetch(`${app.url}/v1/screenshots`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url: `${url}?n=${n++}`, ...VIEWPORT, format: 'png' }),
    });
    const body = await res.text();
    if (res.status !== 201) throw new Error(`HTTP ${res.status}: ${body.slice(0, 200)}`);
    if ((JSON.parse(body) as { cached?: boolean }).cached) throw new Error('a cache hit');
  };
}

/** Candidate encoder settings for the table; `chosen` marks what the service uses. */
function encodingCandidates(): Array<{
  format: ImageFormat;
  setting: string;
  params: Record<string, unknown>;
  chosen: boolean;
}> {
  const service = (format: Exclude<ImageFormat, 'pdf'>, quality: number) =>
    JSON.stringify(encoderSettings(format, quality));
  const list: Array<{ format: ImageFormat; setting: string; params: Record<string, unknown> }> = [
    { format: 'png', setting: 'zlib default', params: { format: 'png', fromSurface: true } },
    {
      format: 'png',
      setting: 'optimizeForSpeed',
      params: { format: 'png', fromSurface: true, optimizeForSpeed: true },
    },
  ];
  for (const format of ['jpeg', 'webp'] as const) {
    for (const quality of [60, 80, 90]) {
      list.push({
        format,
        setting: `quality ${quality}`,
        params: { format, quality, fromSurface: true },
      });
    }
  }
  // Chosen: what encoderSettings gives at the API's default quality (80).
  return list.map((c) => ({
    ...c,
    chosen: c.format !== 'pdf' && JSON.stringify(c.params) === service(c.format, 80),
  }));
}

/**
 * Page.captureScreenshot of the loaded realistic page with each candidate, interleaved:
 * the encoder's time (with the compositor's copy) and the bytes.
 */
async function encodingTable(
  browser: Browser,
  url: string,
  reps: number,
  failures: Failures,
): Promise<{ rows: EncodingRow[]; height: number | null }> {
  const p = await plainPage(browser);
  try {
    await p.page.goto(url, { waitUntil: 'load' });
    await p.page.evaluate(() => document.fonts.ready.then(() => undefined));
    const height = await p.page.evaluate(() => document.documentElement.scrollHeight);
    const candidates = encodingCandidates();
    const times = candidates.map(() => [] as number[]);
    const bytes = candidates.map(() => 0);
    for (let r = 0; r < reps + 1; r++) {
      for (let i = 0; i < candidates.length; i++) {
        const index = (i + r) % candidates.length;
        const c = candidates[index] as (typeof candidates)[number];
        const t0 = performance.now();
        try {
          const shot = await p.cdp.send('Page.captureScreenshot', {
            ...c.params,
            captureBeyondViewport: false,
          } as never);
          const ms = performance.now() - t0;
          // The first rep warms up.
          if (r > 0) times[index]?.push(ms);
          bytes[index] = Buffer.from(shot.data, 'base64').length;
        } catch (err) {
          failures.add(`encoding ${c.format} ${c.setting}`, err);
        }
      }
    }
    const rows = candidates.map((c, i) => ({
      format: c.format,
      setting: c.setting,
      chosen: c.chosen,
      msPerCapture: round(median(times[i] ?? []), 1),
      bytes: bytes[i] ?? 0,
    }));
    return { rows, height };
  } finally {
    await p.close();
  }
}

export interface EngineRow {
  page: PageName;
  concurrency: number;
  shell: Stats;
  full: Stats;
  /** Median over rounds of the shell's captures/s / the full browser's, same round. */
  shellVsFull: number;
  /** CPU ms per capture (Node and Chromium), over the rounds. */
  cpuMs: { shell: number | null; full: number | null };
}

/**
 * The service's renderer on the headless shell against the same renderer on the full browser
 * (docs/engine.md): each its own pool with the same slots, flags and egress
 * proxy, both pages at concurrency 2, the engines alternating in each round (their order
 * swapped every round), CPU read from /proc around every run.
 */
async function engineTable(
  policy: Parameters<typeof createBrowserRenderer>[0]['policy'],
  urls: Record<PageName, string[]>,
  dataDir: string,
  plan: Plan,
  failures: Failures,
  log: (line: string) => void,
): Promise<EngineRow[] | null> {
  const missing = Object.values(ENGINE_PATHS).filter((path) => findChromium(path) === null);
  if (missing.length > 0) {
    log(`capture: engine table skipped, not installed: ${missing.join(', ')}`);
    return null;
  }
  const engines = (['shell', 'full'] as const).map((engine) => {
    const dir = join(dataDir, `engine-${engine}`);
    const renderer = createBrowserRenderer({
      policy,
      render: renderSettings({
        concurrency: SLOTS,
        queueSize: 100,
        maxPageHeight: 16_384,
        chromePath: ENGINE_PATHS[engine],
      }),
      dataDir: dir,
      logger: silentLogger,
    });
    return { engine, dir, renderer };
  });
  try {
    for (const e of engines) await e.renderer.warm();
    const c = 2;
    const rows: EngineRow[] = [];
    for (const page of PAGE_NAMES) {
      const runs = { shell: [] as Run[], full: [] as Run[] };
      for (const e of engines) {
        await drive(urls[page], 4, c, rendererCapture(e.renderer), failures, `engine ${e.engine}`);
      }
      for (let r = 0; r < plan.engineRounds; r++) {
        for (const e of r % 2 === 0 ? engines : [...engines].reverse()) {
          const run = await drive(
            urls[page],
            plan.engineCaptures[page],
            c,
            rendererCapture(e.renderer),
            failures,
            `engine ${e.engine} ${page}`,
            () => rendererBrowserPid(e.dir),
          );
          runs[e.engine].push(run);
        }
      }
      const cpuMs = (list: Run[]) => {
        const parts = cpuPerCapture(list);
        return parts === null ? null : round(parts.total, 1);
      };
      rows.push({
        page,
        concurrency: c,
        shell: summarize(runs.shell),
        full: summarize(runs.full),
        shellVsFull: ratio(runs.shell, runs.full),
        cpuMs: { shell: cpuMs(runs.shell), full: cpuMs(runs.full) },
      });
      log(`capture: engine table, ${page} done`);
    }
    return rows;
  } finally {
    for (const e of engines) await e.renderer.close().catch(() => {});
  }
}

export async function runCaptureBench(
  options: CaptureBenchOptions = {},
): Promise<CaptureBenchResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const plan: Plan = { ...(options.quick ? QUICK : FULL) };
  if (options.soak !== undefined) plan.soak = options.soak;
  const executable = findChromium();
  if (executable === null) throw new Error('Chromium not found: set CHROME_PATH');
  const failures = new Failures();
  const dataDir = await longDataDir('capture-bench');
  let sites: BenchSites | undefined;
  let renderer: Renderer | undefined;
  let browser: Browser | undefined;
  let app: TestApp | undefined;
  let upstream: TestProxy | undefined;
  try {
    sites = await startBenchSites(HOSTS);
    // A local HTTP proxy with Basic auth for the proxy table: an operator proxy of the renderer.
    upstream = await startHttpProxy({ auth: { username: 'bench', password: 'bench' } });
    const urls = sites.urls;
    // The renderer as the service builds it: egress proxy, navigation checks, the fixture
    // servers allowlisted (they are on loopback).
    const egress = createEgress({ allowlist: sites.hostPorts.join(','), selfPorts: [] });
    const lazy = createBrowserRenderer({
      policy: egress.pagePolicy,
      render: renderSettings({
        concurrency: SLOTS,
        queueSize: 100,
        maxPageHeight: 16_384,
        proxies: [benchProxy(upstream.url)],
      }),
      dataDir,
      logger: silentLogger,
    });
    renderer = lazy;
    await lazy.warm();
    browser = await launchBaselineBrowser();
    const baselinePid = browser.process()?.pid ?? null;
    const maxConcurrency = Math.max(...CONCURRENCIES);
    const floorPages: PlainPage[] = [];
    const leavePages: PlainPage[] = [];
    for (let i = 0; i < maxConcurrency; i++) {
      floorPages.push(await plainPage(browser));
      leavePages.push(await plainPage(browser));
    }
    const modes: Record<Mode, CaptureFn> = {
      renderer: rendererCapture(renderer),
      floor: floorCapture(floorPages),
      leave: leaveCapture(leavePages),
      fresh: freshCapture(browser),
    };
    log(`capture: ${SLOTS} renderer slots; warming up`);
    for (const name of PAGE_NAMES) {
      for (const mode of MODES) {
        await drive(urls[name], maxConcurrency, maxConcurrency, modes[mode], failures, mode);
      }
    }

    // runs[page][concurrency][mode] = one run per round; settle[`page c`]: the settle waits.
    const settle: Record<string, number[]> = {};
    const runs: Record<string, Record<number, Record<Mode, Run[]>>> = {};
    const cells = PAGE_NAMES.flatMap((page) => CONCURRENCIES.map((c) => ({ page, c })));
    const started = performance.now();
    for (let r = 0; r < plan.rounds; r++) {
      // On a busy machine, fewer rounds rather than a benchmark past its time budget.
      const elapsed = performance.now() - started;
      if (r >= 2 && elapsed + elapsed / r > ROUNDS_BUDGET_MS) {
        log(`capture: stopping after ${r} rounds (time budget)`);
        break;
      }
      for (const [ci, { page, c }] of cells.entries()) {
        for (let i = 0; i < MODES.length; i++) {
          const mode = MODES[(i + r + ci) % MODES.length] as Mode;
          // The fresh-context loop is context, not a target: its first round only, which keeps
          // the whole benchmark under ten minutes.
          if (mode === 'fresh' && r > 0) continue;
          settle[`${page} ${c}`] ??= [];
          settleWaits = mode === 'renderer' ? (settle[`${page} ${c}`] ?? null) : null;
          const run = await drive(
            urls[page],
            plan.captures[page],
            c,
            modes[mode],
            failures,
            `${mode} ${page} c${c}`,
            mode === 'renderer' ? () => rendererBrowserPid(dataDir) : () => baselinePid,
          );
          settleWaits = null;
          runs[page] ??= {};
          runs[page][c] ??= { renderer: [], floor: [], leave: [], fresh: [] };
          runs[page][c][mode].push(run);
        }
      }
      log(
        `capture: round ${r + 1}/${plan.rounds} done ` +
          `(${round((performance.now() - started) / 1000, 0)} s)`,
      );
    }

    const result: CaptureBenchResult['cells'] = {};
    const cpu: CaptureBenchResult['cpu'] = {};
    for (const page of PAGE_NAMES) {
      cpu[page] = {};
      for (const mode of MODES) {
        const all = CONCURRENCIES.flatMap((c) => runs[page]?.[c]?.[mode] ?? []);
        cpu[page][mode] = cpuPerCapture(all);
      }
    }
    const scaling: Record<string, number> = {};
    const targets: CaptureBenchResult['targets'] = [];
    for (const page of PAGE_NAMES) {
      result[page] = {};
      for (const c of CONCURRENCIES) {
        const byMode = runs[page]?.[c] as Record<Mode, Run[]>;
        const vsFloor = ratio(byMode.renderer, byMode.floor);
        result[page][c] = {
          stats: {
            renderer: summarize(byMode.renderer),
            floor: summarize(byMode.floor),
            leave: summarize(byMode.leave),
            fresh: summarize(byMode.fresh),
          },
          vsFloor,
          vsFresh: ratio(byMode.renderer, byMode.fresh),
          vsLeave: ratio(byMode.renderer, byMode.leave),
          leaveVsFloor: ratio(byMode.leave, byMode.floor),
          settle: settleStats(settle[`${page} ${c}`] ?? []),
        };
        const vsLeave = result[page][c].vsLeave;
        if (TARGET_CONCURRENCIES.includes(c)) {
          const waits = result[page][c].settle;
          targets.push({
            name: `${page}, concurrency ${c}: renderer / leave (captures/s)`,
            value: vsLeave,
            threshold: LEAVE_TARGET,
            met: vsLeave >= LEAVE_TARGET,
            beside: `settle wait p50 ${f0(waits.p50)} ms, p95 ${f0(waits.p95)} ms`,
          });
        }
      }
      const cpuRatio =
        (cpu[page]?.renderer?.total ?? Number.NaN) / (cpu[page]?.leave?.total ?? Number.NaN);
      const waits = settleStats(CONCURRENCIES.flatMap((c) => settle[`${page} ${c}`] ?? []));
      targets.push({
        name: `${page}: renderer / leave (CPU per capture)`,
        value: round(cpuRatio, 2),
        threshold: CPU_TARGET,
        met: cpuRatio <= CPU_TARGET,
        atMost: true,
        beside: `settle wait p50 ${f0(waits.p50)} ms, p95 ${f0(waits.p95)} ms`,
      });
      const at = (c: number) => runs[page]?.[c]?.renderer ?? [];
      scaling[page] = ratio(at(4), at(2));
      targets.push({
        name: `${page}: renderer throughput, concurrency 4 / 2`,
        value: scaling[page],
        threshold: SCALING_TARGET,
        met: scaling[page] >= SCALING_TARGET,
      });
    }

    log('capture: encoder settings');
    const encoding = await encodingTable(
      browser,
      urls.realistic[0] as string,
      plan.encodeReps,
      failures,
    );
    if (encoding.height !== REALISTIC_HEIGHT) {
      failures.add(
        'realistic page',
        new Error(`${encoding.height} px tall, not ${REALISTIC_HEIGHT}`),
      );
    }

    log('capture: the renderer on each engine');
    const engines = await engineTable(egress.pagePolicy, urls, dataDir, plan, failures, log);
    for (const row of engines ?? []) {
      targets.push({
        name: `${row.page}, concurrency ${row.concurrency}: renderer on the shell / on the full browser (captures/s)`,
        value: row.shellVsFull,
        threshold: ENGINE_TARGET,
        met: row.shellVsFull >= ENGINE_TARGET,
        beside: `CPU per capture ${row.cpuMs.shell ?? '?'} ms vs ${row.cpuMs.full ?? '?'} ms`,
      });
    }

    log('capture: blocking flags');
    const blocking = await blockingTable(
      renderer,
      urls.realistic[0] as string,
      plan,
      failures,
      log,
    );

    log('capture: resized images');
    const resize = await cpuTable(
      renderer,
      urls.realistic[0] as string,
      dataDir,
      plan,
      failures,
      log,
      { name: 'resize', variants: RESIZE_VARIANTS },
    );
    const thumbnail = resize.find((row) => row.variant === 'image_width 400')?.vsFull ?? Number.NaN;
    targets.push({
      name: 'realistic: 400 px wide thumbnail / full size (CPU per capture)',
      value: thumbnail,
      threshold: THUMBNAIL_CPU_TARGET,
      met: thumbnail <= THUMBNAIL_CPU_TARGET,
      atMost: true,
    });

    log('capture: html and url');
    const documents = await cpuTable(
      renderer,
      urls.realistic[0] as string,
      dataDir,
      plan,
      failures,
      log,
      { name: 'document', variants: await documentVariants(urls.realistic[0] as string) },
    );
    const asHtml = documents[1]?.vsFull ?? Number.NaN;
    targets.push({
      name: 'realistic: html capture of its document / url capture (CPU per capture)',
      value: asHtml,
      threshold: DOCUMENT_CPU_TARGET,
      met: asHtml <= DOCUMENT_CPU_TARGET,
      atMost: true,
      beside: `p50 ${f0(documents[1]?.stats.medianMs ?? Number.NaN)} ms vs ${f0(documents[0]?.stats.medianMs ?? Number.NaN)} ms`,
    });

    log('capture: through a proxy');
    const proxied = await cpuTable(
      renderer,
      urls.realistic[0] as string,
      dataDir,
      plan,
      failures,
      log,
      { name: 'proxy', variants: PROXY_VARIANTS },
    );
    const viaProxy = proxied[1]?.vsFull ?? Number.NaN;
    targets.push({
      name: 'realistic: capture through a local proxy / direct (CPU per capture)',
      value: viaProxy,
      threshold: PROXY_CPU_TARGET,
      met: viaProxy <= PROXY_CPU_TARGET,
      atMost: true,
      beside: `p50 ${f0(proxied[1]?.stats.medianMs ?? Number.NaN)} ms vs ${f0(proxied[0]?.stats.medianMs ?? Number.NaN)} ms`,
    });

    // The full service beside the floor, interleaved. Its own renderer (another Chromium)
    // runs only in this phase; the bench renderer is closed first, so both do not compete.
    await renderer.close();
    renderer = undefined;
    log('capture: full service');
    app = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: sites.hostPorts.join(','), LOG_LEVEL: 'warn' },
      plans: {
        free: {
          monthly_quota: 1_000_000_000,
          rate_per_minute: 1_000_000,
          concurrent_renders: 16,
        },
      },
    });
    const key = await newApiKey(app);
    const service = serviceCapture(app, key);
    const serviceConcurrency = Math.min(2, maxConcurrency);
    const serviceRows: NonNullable<CaptureBenchResult['service']> = {};
    for (const page of PAGE_NAMES) {
      await drive(urls[page], 4, serviceConcurrency, service, failures, `service ${page} warm-up`);
      const svc: Run[] = [];
      const floor: Run[] = [];
      for (let r = 0; r < plan.serviceRounds; r++) {
        const pair = [
          ['service', service],
          ['floor', modes.floor],
        ] as const;
        for (const [name, fn] of r % 2 === 0 ? pair : [...pair].reverse()) {
          const run = await drive(
            urls[page],
            plan.serviceCaptures[page],
            serviceConcurrency,
            fn,
            failures,
            `${name} ${page} (service phase)`,
          );
          (name === 'service' ? svc : floor).push(run);
        }
      }
      serviceRows[page] = {
        concurrency: serviceConcurrency,
        service: summarize(svc),
        floor: summarize(floor),
        vsFloor: ratio(svc, floor),
      };
    }
    await app.close();
    app = undefined;
    for (const p of [...floorPages, ...leavePages]) await p.close();
    await browser.close();
    browser = undefined;

    let soak: object | null = null;
    if (plan.soak) {
      const soakDir = join(dataDir, 'soak');
      const soakRenderer = createBrowserRenderer({
        policy: egress.pagePolicy,
        render: renderSettings({ concurrency: SLOTS, queueSize: 100, maxPageHeight: 16_384 }),
        dataDir: soakDir,
        logger: silentLogger,
      });
      renderer = soakRenderer;
      await soakRenderer.warm();
      soak = await runSoak(renderer, urls.trivial, soakDir, log, failures);
    }
    const out: CaptureBenchResult = {
      viewport: VIEWPORT,
      slots: SLOTS,
      plan,
      rounds: runs.trivial?.[1]?.renderer.length ?? 0,
      realisticBytes: sites.realisticBytes,
      realisticHeight: encoding.height,
      cells: result,
      cpu,
      scaling,
      service: serviceRows,
      encoding: encoding.rows,
      engines,
      blocking,
      resize,
      documents,
      proxied,
      targets,
      soak,
      failedCaptures: failures.count,
      failures: failures.messages,
    };
    return out;
  } finally {
    // Cleanup problems are logged, never thrown over the error that ended the run.
    const quietly = async (what: string, step: (() => Promise<unknown>) | undefined) => {
      await step?.().catch((err: unknown) => log(`capture: ${what}: ${String(err)}`));
    };
    await quietly('closing the app', app && (() => (app as TestApp).close()));
    await quietly('closing the proxy', upstream && (() => (upstream as TestProxy).close()));
    await quietly('closing the baseline browser', browser && (() => (browser as Browser).close()));
    await quietly('closing the renderer', renderer && (() => (renderer as Renderer).close()));
    await quietly('closing the sites', sites && (() => (sites as BenchSites).close()));
    await quietly('removing the data directory', () => removeDataDir(dataDir));
  }
}

const f1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : '-');
const f2 = (n: number): string => (Number.isFinite(n) ? n.toFixed(2) : '-');
const f0 = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '-');

/** Median and p95 of the settle waits (ms). */
function settleStats(waits: number[]): { p50: number; p95: number; captures: number } {
  if (waits.length === 0) return { p50: Number.NaN, p95: Number.NaN, captures: 0 };
  const sorted = [...waits].sort((a, b) => a - b);
  return { p50: median(sorted), p95: percentile(sorted, 95), captures: waits.length };
}
const cell = (s: Stats): string => `${f2(s.throughputPerSec)}/s (p50 ${f1(s.medianMs)} ms)`;

/** The capture part's tables: every baseline beside every figure, with the ratios. */
export function captureMarkdown(r: CaptureBenchResult): string {
  const lines: string[] = [];
  lines.push(
    `### Capture: the renderer against puppeteer baselines`,
    '',
    `1280x800 PNG viewport captures; the renderer has ${r.slots} slots (RENDER_CONCURRENCY's default), so ` +
      'further workers queue. Ratios: median over ' +
      `${r.rounds} interleaved rounds of the per-round throughput ratio. Realistic page: ` +
      `${Math.round(r.realisticBytes / 1024)} KB in 20 files, ${r.realisticHeight ?? '?'} px tall.`,
    '',
    '| Page | Workers | Renderer (service path) | Floor: reused page, no reset | ' +
      'Renderer / floor | Fresh: new context per capture | Renderer / fresh |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [page, byC] of Object.entries(r.cells)) {
    for (const [c, x] of Object.entries(byC)) {
      lines.push(
        `| ${page} | ${c} | ${cell(x.stats.renderer)} | ${cell(x.stats.floor)} | ` +
          `${f2(x.vsFloor)}x | ${cell(x.stats.fresh)} | ${f2(x.vsFresh)}x |`,
      );
    }
  }
  lines.push(
    '',
    'The same rounds, against the isolating floor whose page is sent to about:blank after each ' +
      "capture: the least any reset of a reused page needs (a page's document must be gone " +
      'before its storage is cleared), without the clearing. It is the reference the targets ' +
      'count against (renderer / leave); leave / floor is the most a renderer that isolates ' +
      'captures on reused pages can reach against the floor on this machine.',
    '',
    "The renderer's settle wait (the page at rest, docs/api.md) is its own column: " +
      'the time each capture waited for the page to stop changing, median and p95.',
    '',
    '| Page | Workers | Renderer | Floor, leaving the page | Renderer / leave | Leave / floor | ' +
      'Settle wait p50 / p95 |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [page, byC] of Object.entries(r.cells)) {
    for (const [c, x] of Object.entries(byC)) {
      lines.push(
        `| ${page} | ${c} | ${cell(x.stats.renderer)} | ${cell(x.stats.leave)} | ` +
          `**${f2(x.vsLeave)}x** | ${f2(x.leaveVsFloor)}x | ` +
          `${f0(x.settle.p50)} / ${f0(x.settle.p95)} ms |`,
      );
    }
  }
  lines.push(
    '',
    'CPU time per capture (ms), over the same rounds at every concurrency: Node is the bench ' +
      "process (the renderer's Node side with its egress proxy, the puppeteer clients, the " +
      'fixture servers), the rest the Chromium tree the captures ran in (exited renderers ' +
      'included). Where the captures at a time keep every core busy they are bound by it: the ' +
      "floor's total over the renderer's is about what renderer / floor can reach there.",
    '',
    '| Page | Mode | Node | Browser process | GPU | Network | Renderers and the rest | Total | ' +
      "Floor's total / this | This / leave's total |",
    '|---|---|---|---|---|---|---|---|---|---|',
  );
  for (const [page, byMode] of Object.entries(r.cpu)) {
    const floor = byMode.floor?.total ?? Number.NaN;
    const leave = byMode.leave?.total ?? Number.NaN;
    for (const [mode, x] of Object.entries(byMode)) {
      if (x === null) continue;
      lines.push(
        `| ${page} | ${mode} | ${f1(x.node)} | ${f1(x.browser)} | ${f1(x.gpu)} | ` +
          `${f1(x.network)} | ${f1(x.renderers)} | ${f1(x.total)} | ${f2(floor / x.total)} | ` +
          `${f2(x.total / leave)} |`,
      );
    }
  }
  if (r.service) {
    lines.push(
      '',
      '### Capture: the full service (HTTP POST /v1/screenshots, cache miss) against the floor',
      '',
      '| Page | Workers | Full service: HTTP, auth, quota, DB, storage | Floor | Service / floor |',
      '|---|---|---|---|---|',
    );
    for (const [page, s] of Object.entries(r.service)) {
      lines.push(
        `| ${page} | ${s.concurrency} | ${cell(s.service)} | ${cell(s.floor)} | ` +
          `**${f2(s.vsFloor)}x** |`,
      );
    }
  }
  const pngDefault = r.encoding.find((e) => e.format === 'png' && e.setting === 'zlib default');
  lines.push(
    '',
    '### Image encoding (realistic page, 1280x800, Page.captureScreenshot alone)',
    '',
    '| Format | Setting | ms per capture | KB | Time / PNG zlib default | Bytes / PNG zlib default | Default |',
    '|---|---|---|---|---|---|---|',
  );
  for (const e of r.encoding) {
    const t = pngDefault ? e.msPerCapture / pngDefault.msPerCapture : Number.NaN;
    const b = pngDefault ? e.bytes / pngDefault.bytes : Number.NaN;
    lines.push(
      `| ${e.format} | ${e.setting} | ${f1(e.msPerCapture)} | ${f1(e.bytes / 1024)} | ` +
        `${f2(t)}x | ${f2(b)}x | ${e.chosen ? '**chosen**' : ''} |`,
    );
  }
  if (r.engines) {
    lines.push(
      '',
      '### Engines: the renderer on the headless shell against the same renderer on the full browser',
      '',
      'Each engine its own pool (same slots, flags and egress proxy), the engines alternating ' +
        'in each round. Ratio: median over rounds of the captures/s of the shell / the full ' +
        "browser's, same round. CPU: Node and Chromium per capture.",
      '',
      '| Page | Workers | Shell | Full browser | Shell / full | CPU ms, shell | CPU ms, full |',
      '|---|---|---|---|---|---|---|',
    );
    for (const e of r.engines) {
      lines.push(
        `| ${e.page} | ${e.concurrency} | ${cell(e.shell)} | ${cell(e.full)} | ` +
          `**${f2(e.shellVsFull)}x** | ${e.cpuMs.shell ?? '-'} | ${e.cpuMs.full ?? '-'} |`,
      );
    }
  }
  lines.push(
    '',
    '### Blocking flags (realistic page, 1280x800 PNG, one capture at a time)',
    '',
    'The page has no ads, trackers or consent banner: each row is what the flag costs a page ' +
      'it finds nothing on. Ratio: median over rounds of the median capture time / the plain ' +
      "capture's, same round.",
    '',
    '| Variant | Captures | p50 ms | p95 ms | Time / plain |',
    '|---|---|---|---|---|',
  );
  for (const b of r.blocking) {
    lines.push(
      `| ${b.variant} | ${b.stats.captures} | ${f1(b.stats.medianMs)} | ${f1(b.stats.p95Ms)} | ` +
        `${b.variant === 'plain' ? 'baseline' : `${f2(b.vsPlain)}x`} |`,
    );
  }
  lines.push(
    '',
    '### Resized images (realistic page, 1280x800 PNG viewport, two at a time)',
    '',
    'The same frame delivered at full size and smaller (`image_width`, `image_height`, ' +
      "`image_fit`). CPU: every part (the renderer's browser and Node) per capture; the ratio " +
      "is the median over rounds of this row's CPU per capture / the full size's, same round.",
    '',
    '| Variant | Captures | p50 ms | CPU ms per capture | CPU / full size |',
    '|---|---|---|---|---|',
  );
  for (const row of r.resize) {
    lines.push(
      `| ${row.variant} | ${row.stats.captures} | ${f1(row.stats.medianMs)} | ${f1(row.cpuMs)} | ` +
        `${row.variant === 'full size' ? 'baseline' : `${f2(row.vsFull)}x`} |`,
    );
  }
  lines.push(
    '',
    '### HTML in place of a URL (realistic page, 1280x800 PNG viewport, two at a time)',
    '',
    'The realistic page by its URL, and its own document sent as `html` at the same address ' +
      '(the browser answers the navigation itself; every subresource still loads through the ' +
      'egress proxy). CPU as in the table above, against the URL capture of the same round.',
    '',
    '| Variant | Captures | p50 ms | CPU ms per capture | CPU / url |',
    '|---|---|---|---|---|',
  );
  for (const row of r.documents ?? []) {
    lines.push(
      `| ${row.variant} | ${row.stats.captures} | ${f1(row.stats.medianMs)} | ${f1(row.cpuMs)} | ` +
        `${row.variant === 'url' ? 'baseline' : `${f2(row.vsFull)}x`} |`,
    );
  }
  lines.push(
    '',
    '### Through a proxy (realistic page, 1280x800 PNG viewport, two at a time)',
    '',
    'The realistic page straight out, and through a local HTTP proxy with Basic ' +
      'authentication (an operator proxy: its own context and egress lane, every request ' +
      'absolute-form through it; the proxy runs in this process, so its CPU is counted). CPU ' +
      'as in the table above, against the direct capture of the same round.',
    '',
    '| Variant | Captures | p50 ms | CPU ms per capture | CPU / direct |',
    '|---|---|---|---|---|',
  );
  for (const row of r.proxied ?? []) {
    lines.push(
      `| ${row.variant} | ${row.stats.captures} | ${f1(row.stats.medianMs)} | ${f1(row.cpuMs)} | ` +
        `${row.variant === 'direct' ? 'baseline' : `${f2(row.vsFull)}x`} |`,
    );
  }
  lines.push(
    '',
    '### Capture targets',
    '',
    '| Target | Value | Threshold | | Beside it |',
    '|---|---|---|---|---|',
  );
  for (const t of r.targets) {
    lines.push(
      `| ${t.name} | ${f2(t.value)} | ${t.atMost ? '<=' : '>='} ${t.threshold} | ` +
        `${t.met ? 'met' : '**NOT MET**'} | ${t.beside ?? ''} |`,
    );
  }
  if (r.soak) lines.push('', `Soak: \`${JSON.stringify(r.soak)}\``);
  if (r.failedCaptures > 0) {
    lines.push('', `**${r.failedCaptures} captures FAILED**:`, ...r.failures.map((m) => `- ${m}`));
  }
  return lines.join('\n');
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
  failures: Failures,
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
  // Warm up (pages of every slot used once) before the first reading.
  await drive(urls, 4 * SLOTS, SLOTS, rendererCapture(renderer), failures, 'soak warm-up');
  await sleep(1_000);
  const before = rendererBrowserPid(dataDir);
  const start = await steady(before);
  const checkpoints: number[] = [];
  const started = performance.now();
  for (let done = 0; done < SOAK_CAPTURES; done += SOAK_STEP) {
    const n = Math.min(SOAK_STEP, SOAK_CAPTURES - done);
    await drive(urls, n, SLOTS, rendererCapture(renderer), failures, 'soak');
    const pid = rendererBrowserPid(dataDir);
    checkpoints.push(pid === null ? -1 : treeUsage(pid).processes);
    if ((done + SOAK_STEP) % 100 === 0) {
      log(`soak: ${done + SOAK_STEP}/${SOAK_CAPTURES} captures, ${checkpoints.at(-1)} processes`);
    }
  }
  const elapsedMs = performance.now() - started;
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
  return {
    captures: SOAK_CAPTURES,
    throughputPerSec: round((SOAK_CAPTURES / elapsedMs) * 1000),
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
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const result = await runCaptureBench({
    quick: args.includes('--quick'),
    ...(args.includes('--no-soak') ? { soak: false } : {}),
  });
  process.stdout.write(`${captureMarkdown(result)}\n`);
  if (result.failedCaptures > 0) {
    process.stderr.write(`\nCAPTURE BENCHMARK FAILED: ${result.failedCaptures} captures failed\n`);
    process.exitCode = 1;
  }
}
