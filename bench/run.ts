/**
 * `npm run bench`: every benchmark of the project in one report, each beside the baseline
 * it is measured against in the same run. The parts, in the order they run (PARTS below; a
 * new benchmark is one more entry there):
 *   - api: cache-hit captures through the full HTTP stack against a bare route (bench/api.ts);
 *   - capture: the renderer against raw puppeteer-core loops on a trivial and a realistic
 *     page, the full service against the same floor, the encoder settings (bench/capture.ts);
 *   - cluster: two nodes on PostgreSQL + Redis + S3 against one node on the same engines
 *     (bench/cluster.ts);
 *   - memory: PSS of Node + Chromium at rest after a concurrency-4 run and over a soak,
 *     against a plain puppeteer browser that did the same work (bench/memory.ts);
 *   - start: process start to first capture, against a bare puppeteer launch + capture
 *     (bench/start.ts);
 *   - async: async captures to their webhook at concurrency 2, one node and two, against
 *     synchronous captures on the same nodes (bench/async.ts);
 *   - tall: a 50,000 px full page (drawn in slices and joined) against a 16,000 px one in the
 *     same run, and the service's resident memory growth while joining against the image's
 *     raw size (bench/tall.ts);
 *   - monitors: a comparison against one realistic capture's CPU, and 1,000 monitors due in
 *     one minute on one node: when each started, the queue's depth, and a synchronous
 *     capture's wait meanwhile against the idle node's (bench/monitors.ts).
 * Prints a markdown report and writes bench/results/latest.json and latest.md. Exits 1, with
 * a loud message, when a part failed or any capture in it failed.
 *
 *   npm run bench -- [--quick] [--only=api,capture,...] [--skip=cluster,...] [--soak=N]
 *
 * --quick: fewer captures, no soak, shorter cluster runs (a check that the harness works;
 * the figures are rougher). --soak=N: the memory part's soak takes N captures (a multiple of
 * 10; default 1,000) instead: a longer soak tells a leak from a heap still filling up.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { BOUNDS } from '../src/domain/bounds.ts';
import { type ApiResult, runApiBench } from './api.ts';
import { type AsyncNodesResult, runAsyncBench } from './async.ts';
import { captureMarkdown, runCaptureBench } from './capture.ts';
import { runClusterBench } from './cluster.ts';
import {
  MEMORY_SLOTS,
  type MemoryResult,
  runMemoryBench,
  SOAK_CHECKPOINTS,
  TARGET_MIB,
} from './memory.ts';
import { monitorMarkdown, runMonitorBench } from './monitors.ts';
import { runStartBench, type StartResult } from './start.ts';
import type { Target } from './stats.ts';
import { MEMORY_TARGET, runTallBench, type TallResult, TIME_TARGET } from './tall.ts';

interface Row {
  benchmark: string;
  variant: string;
  throughput: string;
  p50: string;
  tail: string;
  note: string;
}

/** What a part hands back: its JSON, its lines of the common table and/or its own section. */
interface PartOutcome {
  json: unknown;
  rows?: Row[];
  markdown?: string;
  /** Failed captures or requests: any of them fails the whole run. */
  failures?: string[];
  /** The issue's targets this part measures, for the summary table. */
  targets?: Target[];
}

interface PartContext {
  quick: boolean;
  /** `--soak=N`, for the memory part. */
  soakCaptures?: number;
  log: (line: string) => void;
}

interface Part {
  name: string;
  run(ctx: PartContext): Promise<PartOutcome>;
}

function parseArgs(argv: string[]): { quick: boolean; soakCaptures?: number; parts: Part[] } {
  const names = PARTS.map((p) => p.name);
  const value = (name: string): string | null =>
    argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? null;
  const list = (name: string): string[] | null => value(name)?.split(',').filter(Boolean) ?? null;
  const only = list('only');
  const skip = list('skip') ?? [];
  for (const name of [...(only ?? []), ...skip]) {
    if (!names.includes(name)) {
      throw new Error(`unknown benchmark "${name}" (one of ${names.join(', ')})`);
    }
  }
  const soak = value('soak');
  if (soak !== null && !(/^[1-9][0-9]*$/.test(soak) && Number(soak) % SOAK_CHECKPOINTS === 0)) {
    throw new Error(
      `--soak must be a number of captures, a multiple of ${SOAK_CHECKPOINTS} (not "${soak}")`,
    );
  }
  return {
    quick: argv.includes('--quick'),
    ...(soak === null ? {} : { soakCaptures: Number(soak) }),
    parts: PARTS.filter((p) => (only ? only.includes(p.name) : true) && !skip.includes(p.name)),
  };
}

const fmt = (n: unknown, digits = 1): string =>
  typeof n === 'number' && Number.isFinite(n)
    ? String(Math.round(n * 10 ** digits) / 10 ** digits)
    : '-';

type HttpRun = { rps: number; p50: number; p99: number };

function apiRows(result: ApiResult): Row[] {
  const rows: Row[] = [];
  for (const e of [result.sqlite, result.postgres_redis]) {
    if (e === null) continue;
    const row = (variant: string, r: HttpRun & { cpuUsPerRequest: number }, note: string): Row => ({
      benchmark: `cache hit, one node (${e.engine})`,
      variant,
      throughput: `${fmt(r.rps, 0)} req/s`,
      p50: fmt(r.p50),
      tail: `p99 ${fmt(r.p99)}`,
      note: `${note}${note ? '; ' : ''}${r.cpuUsPerRequest} µs CPU per request`,
    });
    rows.push(
      row(
        'full stack: auth, rate, quota, cache',
        e.cache_hit,
        `${fmt(e.ratio_rps, 2)}x bare (median of ${e.rounds} rounds)`,
      ),
      row('baseline: bare Fastify route', e.bare_route, ''),
    );
  }
  return rows;
}

function clusterRows(result: Awaited<ReturnType<typeof runClusterBench>>): Row[] {
  const rows: Row[] = [];
  for (const r of [result.oneNode, result.twoNodes]) {
    const variant = r.nodes === 1 ? 'one node' : 'two nodes, alternately';
    rows.push({
      benchmark: 'cache hit, PostgreSQL + Redis + S3',
      variant,
      throughput: `${fmt(r.cacheHit.rps, 0)} req/s`,
      p50: fmt(r.cacheHit.p50),
      tail: `p99 ${fmt(r.cacheHit.p99)}`,
      note: r.nodes === 2 ? `${fmt(result.ratios.cacheHitRps, 2)}x one node` : '',
    });
  }
  for (const r of [result.oneNode, result.twoNodes]) {
    const variant = r.nodes === 1 ? 'one node' : 'two nodes, alternately';
    rows.push({
      benchmark: 'capture (miss), PostgreSQL + Redis + S3',
      variant,
      throughput: `${fmt(r.capture.throughputPerSec, 2)} captures/s`,
      p50: fmt(r.capture.medianMs),
      tail: `p95 ${fmt(r.capture.p95Ms)}`,
      note:
        (r.nodes === 2 ? `${fmt(result.ratios.captureThroughput, 2)}x one node` : '') +
        (r.capture.errors ? ` ${r.capture.errors} errors` : ''),
    });
  }
  return rows;
}

function memoryRows(result: MemoryResult): Row[] {
  const rest = (r: MemoryResult['atRest']) => `${fmt(r.pssMiB, 0)} MiB PSS`;
  const rows: Row[] = [
    {
      benchmark: 'memory at rest (Node + Chromium)',
      variant: `service, after ${result.load.captures} captures at concurrency 4`,
      throughput: rest(result.atRest),
      p50: '-',
      tail: '-',
      note:
        `${result.atRest.processes} processes (Node ${fmt(result.atRest.nodePssMiB, 0)} MiB); ` +
        `${fmt(result.atRest.pssMiB / MEMORY_SLOTS, 0)} MiB per render slot (${MEMORY_SLOTS}); ` +
        `target ${TARGET_MIB} MiB ${result.targetMet ? 'met' : 'NOT met'}; first capture after rest ` +
        `${fmt(result.firstAfterRestMs, 0)} ms (back to back ${result.backToBackMs.map((ms) => fmt(ms, 0)).join('/')} ms)`,
    },
    {
      benchmark: 'memory at rest (Node + Chromium)',
      variant: 'baseline: puppeteer, new context per capture (Chromium only)',
      throughput: rest(result.baseline.atRest),
      p50: '-',
      tail: '-',
      note: `${result.baseline.atRest.processes} processes`,
    },
  ];
  const soak = result.soak;
  if (soak) {
    rows.push({
      benchmark: `memory soak (${soak.captures} captures, ${soak.page} page)`,
      variant: `service, concurrency 4, PSS every ${soak.captures / SOAK_CHECKPOINTS}`,
      throughput: `${fmt((soak.captures / soak.elapsedMs) * 1000, 2)} captures/s`,
      p50: '-',
      tail: '-',
      note:
        `under load: first half ${fmt(soak.firstHalfMiB, 0)} MiB, second half ` +
        `${fmt(soak.secondHalfMiB, 0)} MiB (${fmt(soak.growthPercent)}%), processes ` +
        `${fmt(soak.processGrowth)}; Node heap after GC ${fmt(soak.nodeHeapFirstHalfMiB)} -> ` +
        `${fmt(soak.nodeHeapSecondHalfMiB)} MiB; at rest halfway ` +
        `${fmt(soak.restHalfway.pssMiB, 0)} MiB (Chromium ${fmt(soak.restHalfway.chromiumPssMiB, 0)}, ` +
        `${soak.restHalfway.processes} processes, ${soak.restHalfway.renderers} renderers), at the ` +
        `end ${fmt(soak.restEnd.pssMiB, 0)} MiB (Chromium ${fmt(soak.restEnd.chromiumPssMiB, 0)}, ` +
        `${soak.restEnd.processes} processes, ${soak.restEnd.renderers} renderers)` +
        (soak.errors ? `, ${soak.errors} errors` : ''),
    });
  }
  return rows;
}

function asyncRows(result: { oneNode: AsyncNodesResult; twoNodes: AsyncNodesResult }): Row[] {
  const rows: Row[] = [];
  for (const r of [result.oneNode, result.twoNodes]) {
    const where = r.nodes === 1 ? 'one node' : 'two nodes, alternately';
    rows.push(
      {
        benchmark: 'async capture to webhook, concurrency 2 (PostgreSQL + Redis/BullMQ)',
        variant: where,
        throughput: `${fmt(r.async.perSecond, 2)} jobs/s`,
        p50: fmt(r.async.p50Ms, 0),
        tail: `p95 ${fmt(r.async.p95Ms, 0)}`,
        note:
          `${fmt(r.async.perSecond / r.sync.perSecond, 2)}x sync; latency is enqueue to ` +
          `webhook received` +
          (r.async.errors ? `; ${r.async.errors} errors` : ''),
      },
      {
        benchmark: 'async capture to webhook, concurrency 2 (PostgreSQL + Redis/BullMQ)',
        variant: `baseline: synchronous captures, ${where}`,
        throughput: `${fmt(r.sync.perSecond, 2)} captures/s`,
        p50: fmt(r.sync.p50Ms, 0),
        tail: `p95 ${fmt(r.sync.p95Ms, 0)}`,
        note: r.sync.errors ? `${r.sync.errors} errors` : '',
      },
    );
  }
  return rows;
}

function startRows(result: StartResult): Row[] {
  const max = (xs: number[]) => Math.max(...xs);
  return [
    {
      benchmark: 'start to first capture',
      variant: 'service: node src/main.ts, account exists',
      throughput: '-',
      p50: fmt(result.median.firstCaptureMs, 0),
      tail: `max ${fmt(max(result.runs.map((r) => r.firstCaptureMs)), 0)}`,
      note:
        `listening ${fmt(result.median.listeningMs, 0)} ms, ready ${fmt(result.median.readyMs, 0)} ms; ` +
        `target 2000 ms ${result.targetMet ? 'met' : 'NOT met'}; ${result.starts} starts`,
    },
    {
      benchmark: 'start to first capture',
      variant: 'baseline: bare puppeteer launch + newPage + goto + screenshot',
      throughput: '-',
      p50: fmt(result.baselineMedianMs, 0),
      tail: `max ${fmt(max(result.baselineRunsMs), 0)}`,
      note: '',
    },
  ];
}

function tallRows(result: TallResult): Row[] {
  const ms = (xs: TallResult['tall']) => xs.map((c) => c.ms).sort((a, b) => a - b);
  const mib = (bytes: number) => fmt(bytes / 2 ** 20, 0);
  const row = (variant: string, xs: TallResult['tall'], note: string): Row => {
    const sorted = ms(xs);
    return {
      benchmark: 'full page, 1280 wide, PNG (service, one slot)',
      variant,
      throughput: '-',
      p50: fmt(sorted[(sorted.length - 1) >> 1], 0),
      tail: `max ${fmt(sorted[sorted.length - 1], 0)}`,
      note,
    };
  };
  const peak = Math.max(result.first.rssGrowthBytes, ...result.tall.map((c) => c.rssGrowthBytes));
  return [
    row(
      `50,000 px: ${Math.ceil(50_000 / BOUNDS.browser.sliceHeight)} slices joined`,
      result.tall,
      `${fmt(result.timeRatio, 2)}x the 16,000 px page (median of ${result.rounds} rounds); ` +
        `target <= ${TIME_TARGET}x ${result.timeTargetMet ? 'met' : 'NOT met'}; ` +
        `${mib(result.tall[0]?.imageBytes ?? 0)} MiB PNG`,
    ),
    row(
      'baseline: 16,000 px, one piece',
      result.base,
      `${mib(result.base[0]?.imageBytes ?? 0)} MiB PNG`,
    ),
    {
      benchmark: 'full page, 1280 wide, PNG (service, one slot)',
      variant: '50,000 px: Node RSS growth while capturing and joining',
      throughput: `+${mib(peak)} MiB`,
      p50: '-',
      tail: '-',
      note:
        `${fmt(result.memoryRatio, 2)}x the raw image (${mib(result.rawBytes)} MiB), highest ` +
        `of ${result.rounds + 1} (the process's first included); target < ${MEMORY_TARGET}x; ` +
        'VmRSS of the service process every 10 ms over the request, less the reading before it',
    },
    {
      benchmark: 'full page, 1280 wide, PNG (service, one slot)',
      variant: '50,000 px of random pixels (worst case): Node RSS growth, a fresh node',
      throughput: `+${mib(result.noise.rssGrowthBytes)} MiB`,
      p50: fmt(result.noise.ms, 0),
      tail: '-',
      note:
        `${fmt(result.noiseMemoryRatio, 2)}x the raw image; target < ${MEMORY_TARGET}x ` +
        `${result.memoryTargetMet ? 'met' : 'NOT met'} (both pages); ` +
        `${mib(result.noise.imageBytes)} MiB PNG`,
    },
  ];
}

function targetTable(targets: Target[]): string {
  const met = targets.filter((t) => t.met).length;
  return [
    `## Targets: ${met} of ${targets.length} met`,
    '',
    '| Target | Measured | Threshold | | Beside it |',
    '|---|---|---|---|---|',
    ...targets.map(
      (t) =>
        `| ${t.name} | ${t.value} | ${t.threshold} | ${t.met ? 'met' : '**NOT MET**'} | ` +
        `${t.beside ?? ''} |`,
    ),
  ].join('\n');
}

function markdown(
  rows: Row[],
  sections: string[],
  failures: string[],
  meta: Record<string, unknown>,
): string {
  const header = '| Benchmark | Variant | Throughput | p50 ms | Tail ms | Note |';
  const lines = rows.map(
    (r) => `| ${r.benchmark} | ${r.variant} | ${r.throughput} | ${r.p50} | ${r.tail} | ${r.note} |`,
  );
  return [
    `# Benchmarks (${meta.date})`,
    '',
    `Machine: ${meta.cpu}, ${meta.cores} cores, load average ${meta.loadBefore} at the start.` +
      (meta.quick ? ' Quick mode: rough figures.' : ''),
    '',
    ...(failures.length > 0 ? ['## FAILED', '', ...failures.map((f) => `- ${f}`), ''] : []),
    ...(rows.length > 0 ? [header, '|---|---|---|---|---|---|', ...lines, ''] : []),
    ...sections.flatMap((s) => [s, '']),
  ].join('\n');
}

/** The benchmarks, in the order they run. */
const PARTS: Part[] = [
  // The HTTP part runs first: measured right after the capture part it would share the
  // machine with the tail of a 500-capture soak's Chromium shutting down.
  {
    name: 'api',
    run: async ({ quick, log }) => {
      const r = await runApiBench({ quick });
      for (const e of [r.sqlite, r.postgres_redis]) {
        if (e === null) continue;
        log(
          `${e.engine}: cache hit ${fmt(e.cache_hit.rps, 0)} req/s (p50 ${e.cache_hit.p50} ms, ` +
            `p99 ${e.cache_hit.p99} ms, ${fmt(e.ratio_rps, 2)}x bare); bare route ` +
            `${fmt(e.bare_route.rps, 0)} req/s`,
        );
      }
      return {
        json: r,
        rows: apiRows(r),
        failures: r.postgres_redis === null ? ['PostgreSQL or Redis is not running'] : [],
        targets: r.targets,
      };
    },
  },
  {
    name: 'capture',
    run: async ({ quick, log }) => {
      // The soak with memory checkpoints is the memory part's (1,000 captures); this part's
      // own 500-capture soak would only repeat it and take three minutes.
      const r = await runCaptureBench({ quick, log, soak: false });
      return {
        json: r,
        markdown: captureMarkdown(r),
        targets: r.targets.map((t) => ({
          name: t.name,
          value: fmt(t.value, 2),
          threshold: `${t.atMost ? '<=' : '>='} ${t.threshold}`,
          met: t.met,
          ...(t.beside ? { beside: t.beside } : {}),
        })),
        failures:
          r.failures.length > 0 || r.failedCaptures > 0
            ? [`${r.failedCaptures} captures failed: ${r.failures.join('; ')}`]
            : [],
      };
    },
  },
  {
    name: 'cluster',
    run: async ({ quick, log }) => {
      const r = await runClusterBench({ quick, log });
      const errors = r.oneNode.capture.errors + r.twoNodes.capture.errors;
      return {
        json: r,
        rows: clusterRows(r),
        failures: errors > 0 ? [`${errors} cluster captures failed`] : [],
      };
    },
  },
  {
    name: 'memory',
    run: async ({ quick, log, soakCaptures }) => {
      const r = await runMemoryBench({ quick, log, ...(soakCaptures ? { soakCaptures } : {}) });
      const errors = r.load.errors + (r.soak?.errors ?? 0);
      return {
        json: r,
        rows: memoryRows(r),
        targets: [
          {
            name: 'memory at rest after the concurrency-4 realistic run (Node + Chromium PSS)',
            value: `${fmt(r.atRest.pssMiB, 0)} MiB (${fmt(r.atRest.pssMiB / MEMORY_SLOTS, 0)} MiB per slot, ${MEMORY_SLOTS} slots)`,
            threshold: `<= ${TARGET_MIB} MiB (the last run on the full browser)`,
            met: r.targetMet,
          },
          ...(r.soak
            ? [
                {
                  name:
                    `soak, ${r.soak.captures} captures: Node heap after GC (second half / ` +
                    'first half); Chromium PSS and renderer processes at rest (end / halfway)',
                  value:
                    `Node ${fmt(r.soak.nodeHeapGrowthPercent)}%, Chromium ` +
                    `${fmt(r.soak.chromiumRestGrowthPercent)}%, renderers ` +
                    `${fmt(r.soak.restRendererGrowth)}`,
                  // Renderers are what captures start; Chromium's own helpers (its storage
                  // and on-device model services) come and go on their timers and are in the
                  // PSS, not in this count. A leaked context per many captures would show as
                  // several renderers more by the end.
                  threshold: '< +5%, < +5%, < +2',
                  met:
                    r.soak.nodeHeapGrowthPercent < 5 &&
                    r.soak.chromiumRestGrowthPercent < 5 &&
                    r.soak.restRendererGrowth < 2,
                },
              ]
            : []),
        ],
        failures: errors > 0 ? [`${errors} memory-run captures failed`] : [],
      };
    },
  },
  {
    name: 'start',
    run: async ({ quick, log }) => {
      const r = await runStartBench({ quick, log });
      return {
        json: r,
        rows: startRows(r),
        targets: [
          {
            name: 'start: process start to first capture (median)',
            value: `${fmt(r.median.firstCaptureMs, 0)} ms`,
            threshold: '<= 2000 ms',
            met: r.targetMet,
          },
        ],
      };
    },
  },
  {
    name: 'async',
    run: async ({ quick, log }) => {
      const r = await runAsyncBench({ quick, log });
      const errors = [r.oneNode, r.twoNodes].reduce(
        (n, x) => n + x.async.errors + x.sync.errors,
        0,
      );
      return {
        json: r,
        rows: asyncRows(r),
        failures: errors > 0 ? [`${errors} async or sync captures failed`] : [],
      };
    },
  },
  {
    name: 'tall',
    run: async ({ quick, log }) => {
      const r = await runTallBench({ quick, log });
      return {
        json: r,
        rows: tallRows(r),
        targets: [
          {
            name: 'tall page: 50,000 px full-page capture time / 16,000 px, 1280 wide (median)',
            value: `${fmt(r.timeRatio, 2)}x`,
            threshold: `<= ${TIME_TARGET}x`,
            met: r.timeTargetMet,
          },
          {
            name:
              'tall page: service RSS growth while joining / the image raw size (text page; ' +
              'random pixels)',
            value: `${fmt(r.memoryRatio, 2)}x; ${fmt(r.noiseMemoryRatio, 2)}x`,
            threshold: `< ${MEMORY_TARGET}x`,
            met: r.memoryTargetMet,
          },
        ],
      };
    },
  },
  {
    name: 'monitors',
    run: async ({ quick, log }) => {
      const r = await runMonitorBench({ quick, log });
      return { json: r, markdown: monitorMarkdown(r), targets: r.targets };
    },
  },
];

async function main(): Promise<void> {
  const { quick, soakCaptures, parts } = parseArgs(process.argv.slice(2));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const meta = {
    date: new Date().toISOString(),
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown CPU',
    cores: availableParallelism(),
    loadBefore: loadavg()
      .map((n) => fmt(n, 2))
      .join(' '),
    quick,
    parts: parts.map((p) => p.name),
  };
  const results: Record<string, unknown> = {};
  const rows: Row[] = [];
  const sections: string[] = [];
  const failures: string[] = [];
  const targets: Target[] = [];
  const benchStarted = performance.now();
  for (const part of parts) {
    log(`== ${part.name}`);
    const started = performance.now();
    try {
      const outcome = await part.run({ quick, log, ...(soakCaptures ? { soakCaptures } : {}) });
      results[part.name] = outcome.json;
      rows.push(...(outcome.rows ?? []));
      if (outcome.markdown) sections.push(outcome.markdown);
      for (const f of outcome.failures ?? []) failures.push(`${part.name}: ${f}`);
      targets.push(...(outcome.targets ?? []));
    } catch (err) {
      const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push(`${part.name}: the part failed: ${message.split('\n')[0]}`);
      results[part.name] = { error: message };
      log(`${part.name} failed: ${message}`);
    }
    log(`== ${part.name} done in ${fmt((performance.now() - started) / 1000)} s`);
  }
  const seconds = (performance.now() - benchStarted) / 1000;
  if (parts.length === PARTS.length) {
    targets.push({
      name: 'the whole benchmark',
      value: `${fmt(seconds, 0)} s`,
      threshold: '< 600 s',
      met: seconds < 600,
    });
  }
  log(`== all parts done in ${fmt(seconds, 0)} s`);
  const report = markdown(rows, [targetTable(targets), ...sections], failures, meta);
  const dir = path.resolve(import.meta.dirname, 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(
    path.join(dir, 'latest.json'),
    `${JSON.stringify({ meta, failures, results }, null, 2)}\n`,
  );
  await writeFile(path.join(dir, 'latest.md'), report);
  process.stdout.write(`${report}\n`);
  if (failures.length > 0) {
    process.stderr.write(
      `\n${'!'.repeat(72)}\nBENCHMARK FAILED (${failures.length}):\n` +
        `${failures.map((f) => `  ${f}`).join('\n')}\n${'!'.repeat(72)}\n`,
    );
    process.exitCode = 1;
  }
}

await main();
