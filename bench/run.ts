/**
 * `npm run bench`: every benchmark of the project in one report, each beside the baseline
 * it is measured against in the same run:
 *   - capture: the Chromium renderer against raw puppeteer-core loops (bench/capture.ts);
 *   - api: cache-hit captures through the full HTTP stack against a bare route (bench/api.ts);
 *   - cluster: two nodes on PostgreSQL + Redis + S3 against one node on the same engines
 *     (bench/cluster.ts).
 * Prints a markdown table and writes bench/results/latest.json and latest.md.
 *
 *   npm run bench -- [--quick] [--only=capture,api,cluster] [--skip=cluster]
 *
 * --quick: fewer captures, no soak, shorter cluster runs (a check that the harness works;
 * the figures are rougher).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg } from 'node:os';
import path from 'node:path';
import { runApiBench } from './api.ts';
import { runCaptureBench } from './capture.ts';
import { runClusterBench } from './cluster.ts';

// The HTTP part runs first: measured right after the capture part it would share the machine
// with the tail of a 500-capture soak's Chromium shutting down.
const PARTS = ['api', 'capture', 'cluster'] as const;
type Part = (typeof PARTS)[number];

interface Row {
  benchmark: string;
  variant: string;
  throughput: string;
  p50: string;
  tail: string;
  note: string;
}

function parseArgs(argv: string[]): { quick: boolean; parts: Part[] } {
  const list = (name: string): string[] | null => {
    const arg = argv.find((a) => a.startsWith(`--${name}=`));
    return arg ? (arg.split('=')[1] ?? '').split(',').filter(Boolean) : null;
  };
  const only = list('only');
  const skip = list('skip') ?? [];
  for (const name of [...(only ?? []), ...skip]) {
    if (!(PARTS as readonly string[]).includes(name)) {
      throw new Error(`unknown benchmark "${name}" (one of ${PARTS.join(', ')})`);
    }
  }
  return {
    quick: argv.includes('--quick'),
    parts: PARTS.filter((p) => (only ? only.includes(p) : true) && !skip.includes(p)),
  };
}

const fmt = (n: unknown, digits = 1): string =>
  typeof n === 'number' && Number.isFinite(n)
    ? String(Math.round(n * 10 ** digits) / 10 ** digits)
    : '-';

type Stats = { throughputPerSec: number; medianMs: number; p95Ms: number };
type HttpRun = { rps: number; p50: number; p99: number };

function captureRows(result: { results: Record<string, Stats>; ratios: object }): Row[] {
  const labels: Record<string, string> = {
    renderer: 'renderer (pool, isolated contexts)',
    fresh: 'baseline: puppeteer, new context per capture',
    floor: 'baseline: puppeteer, one reused page',
  };
  return Object.entries(result.results).map(([key, s]) => {
    const [mode = key, concurrency = '?'] = key.split('@');
    return {
      benchmark: 'capture (renderer only)',
      variant: `${labels[mode] ?? mode}, concurrency ${concurrency}`,
      throughput: `${fmt(s.throughputPerSec, 2)} captures/s`,
      p50: fmt(s.medianMs),
      tail: `p95 ${fmt(s.p95Ms)}`,
      note: '',
    };
  });
}

function apiRows(result: { cache_hit: HttpRun; bare_route: HttpRun; ratio_rps: number }): Row[] {
  const row = (variant: string, r: HttpRun, note = ''): Row => ({
    benchmark: 'cache hit, one node (SQLite)',
    variant,
    throughput: `${fmt(r.rps, 0)} req/s`,
    p50: fmt(r.p50),
    tail: `p99 ${fmt(r.p99)}`,
    note,
  });
  return [
    row(
      'full stack: auth, rate, quota, cache',
      result.cache_hit,
      `${fmt(result.ratio_rps, 2)}x bare`,
    ),
    row('baseline: bare Fastify route', result.bare_route),
  ];
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

function markdown(rows: Row[], meta: Record<string, unknown>): string {
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
    header,
    '|---|---|---|---|---|---|',
    ...lines,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { quick, parts } = parseArgs(process.argv.slice(2));
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
    parts,
  };
  const results: Record<string, unknown> = {};
  const rows: Row[] = [];
  const failures: string[] = [];
  for (const part of parts) {
    log(`== ${part}`);
    const started = performance.now();
    try {
      if (part === 'capture') {
        const r = (await runCaptureBench({
          log,
          ...(quick ? { captures: 20, soak: false } : {}),
        })) as Parameters<typeof captureRows>[0];
        results.capture = r;
        rows.push(...captureRows(r));
      } else if (part === 'api') {
        const r = (await runApiBench()) as Parameters<typeof apiRows>[0];
        results.api = r;
        rows.push(...apiRows(r));
        log(
          `cache hit ${fmt(r.cache_hit.rps, 0)} req/s (p50 ${r.cache_hit.p50} ms, p99 ` +
            `${r.cache_hit.p99} ms); bare route ${fmt(r.bare_route.rps, 0)} req/s`,
        );
      } else {
        const r = await runClusterBench({ quick, log });
        results.cluster = r;
        rows.push(...clusterRows(r));
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      failures.push(`${part}: ${message}`);
      results[part] = { error: message };
      log(`${part} failed: ${message}`);
    }
    log(`== ${part} done in ${fmt((performance.now() - started) / 1000)} s`);
  }
  const report = markdown(rows, meta);
  const dir = path.resolve(import.meta.dirname, 'results');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'latest.json'), `${JSON.stringify({ meta, results }, null, 2)}\n`);
  await writeFile(path.join(dir, 'latest.md'), report);
  process.stdout.write(`${report}\n`);
  if (failures.length > 0) {
    process.stderr.write(`failed:\n${failures.map((f) => `  ${f}`).join('\n')}\n`);
    process.exitCode = 1;
  }
}

await main();
