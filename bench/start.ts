/**
 * Start-up time of the real service: `node src/main.ts` spawned on a data directory whose
 * account and API key already exist (made by a first start that is not timed), measured from
 * the spawn to: listening (/healthz answers), ready (/readyz 200: the browser is up) and the
 * first capture's 201 (POST /v1/screenshots sent as soon as the process listens). Target: the
 * first capture answered within 2 s of the spawn on a warm machine.
 * Baseline, interleaved with the starts: a bare puppeteer-core launch() + newPage + goto +
 * screenshot of the same page, from a fresh Node process (imports included).
 *
 *   ./node_modules/.bin/node bench/start.ts [--quick]
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findChromium, launchableBinary } from '../src/adapters/browser/process/find-chromium.ts';
import { freePort, PASSWORD, uniqueEmail } from '../test/helpers/app.ts';
import { longDataDir, removeDataDir } from '../test/helpers/data-dir.ts';
import { serviceEnv } from '../test/helpers/node-process.ts';
import { startBenchSites } from './fixtures/site.ts';
import { median } from './stats.ts';

const MAIN = path.resolve(import.meta.dirname, '..', 'src', 'main.ts');
const STARTS = 3;
const QUICK_STARTS = 2;
const VIEWPORT = { width: 1280, height: 800 };
/** Generous: a cold first start on a busy machine (compile cache empty) can take a minute. */
const TIMEOUT_MS = 180_000;
const TARGET_MS = 2_000;

export interface StartBenchOptions {
  quick?: boolean;
  log?: (line: string) => void;
}

export interface StartPhases {
  listeningMs: number;
  readyMs: number;
  firstCaptureMs: number;
}

export interface StartResult {
  starts: number;
  runs: StartPhases[];
  median: StartPhases;
  baselineRunsMs: number[];
  baselineMedianMs: number;
  targetMet: boolean;
  signupMs: number;
}

const round = (n: number): number => Math.round(n);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Service {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<void>;
}

function spawnService(dataDir: string, env: Record<string, string>): Promise<Service> {
  return freePort().then((port) => {
    const url = `http://127.0.0.1:${port}`;
    const child = spawn(process.execPath, [MAIN], {
      env: {
        ...serviceEnv({ port, dataDir }),
        NODE_ENV: 'production',
        // A local instance: production settings otherwise (no pretty logs, no dev paths).
        LOCAL_BILLING_IN_PRODUCTION: '1',
        // Required in production; the bench's own, never a real deployment's.
        SERVER_SECRET: 'bench-server-secret-0123456789abcdef',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += String(chunk);
    });
    child.stderr?.on('data', (chunk) => {
      output += String(chunk);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      child,
      url,
      output: () => output,
      stop: async () => {
        if (child.exitCode === null && child.signalCode === null) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          await exited;
          clearTimeout(timer);
        }
      },
    };
  });
}

/** Polls `path` until it answers `status` (fetch errors: not listening yet). */
async function until(url: string, status: number, service: Service): Promise<void> {
  const deadline = performance.now() + TIMEOUT_MS;
  for (;;) {
    const res = await fetch(url).catch(() => null);
    await res?.body?.cancel();
    if (res?.status === status) return;
    if (service.child.exitCode !== null) throw new Error(`service exited:\n${service.output()}`);
    if (performance.now() > deadline)
      throw new Error(`no ${status} from ${url}:\n${service.output()}`);
    await sleep(5);
  }
}

/** One timed start on an existing data directory. */
async function timedStart(
  dataDir: string,
  env: Record<string, string>,
  key: string,
  target: string,
): Promise<StartPhases> {
  const t0 = performance.now();
  const service = await spawnService(dataDir, env);
  try {
    await until(`${service.url}/healthz`, 200, service);
    const listeningMs = performance.now() - t0;
    let readyMs = 0;
    const ready = until(`${service.url}/readyz`, 200, service).then(() => {
      readyMs = performance.now() - t0;
    });
    const res = await fetch(`${service.url}/v1/screenshots`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ url: target, ...VIEWPORT, format: 'png' }),
    });
    const body = await res.text();
    const firstCaptureMs = performance.now() - t0;
    if (res.status !== 201) throw new Error(`first capture: ${res.status} ${body}`);
    await ready;
    return {
      listeningMs: round(listeningMs),
      readyMs: round(readyMs),
      firstCaptureMs: round(firstCaptureMs),
    };
  } finally {
    await service.stop();
  }
}

/** The baseline: a fresh Node process running a bare puppeteer launch + one capture. */
async function baselineRun(executable: string, target: string): Promise<number> {
  const script = `
    import { launch } from 'puppeteer-core';
    const browser = await launch({ executablePath: ${JSON.stringify(executable)}, headless: 'shell',
      pipe: true, args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    const page = await browser.newPage();
    await page.setViewport(${JSON.stringify(VIEWPORT)});
    await page.goto(${JSON.stringify(target)}, { waitUntil: 'load' });
    await page.screenshot({ type: 'png' });
    process.stdout.write('done');
    await browser.close();
  `;
  const t0 = performance.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: path.resolve(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let elapsed = 0;
  let err = '';
  child.stderr?.on('data', (chunk) => {
    err += String(chunk);
  });
  child.stdout?.on('data', () => {
    elapsed ||= performance.now() - t0;
  });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0 || elapsed === 0) throw new Error(`baseline failed (${code}): ${err}`);
  return round(elapsed);
}

export async function runStartBench(options: StartBenchOptions = {}): Promise<StartResult> {
  const log = options.log ?? ((line: string) => console.log(line));
  const starts = options.quick ? QUICK_STARTS : STARTS;
  const executable = findChromium();
  if (executable === null) throw new Error('Chromium not found: set CHROME_PATH');
  const site = await startBenchSites(['127.0.0.1']);
  const origin = new URL(site.urls.realistic[0] as string).origin;
  const dataDir = await longDataDir('startbench');
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-startbench-'));
  try {
    const plans = path.join(dir, 'plans.json');
    await writeFile(
      plans,
      JSON.stringify({ free: { monthly_quota: 1_000_000, rate_per_minute: 1_000_000 } }),
    );
    const env = { EGRESS_ALLOWLIST: site.hostPorts.join(','), PLANS_FILE: plans };
    // The first start makes the account and its key (not timed beyond the sign-up itself).
    const first = await spawnService(dataDir, env);
    let key: string;
    let signupMs: number;
    try {
      await until(`${first.url}/readyz`, 200, first);
      const t0 = performance.now();
      const res = await fetch(`${first.url}/v1/auth/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: uniqueEmail('startbench'), password: PASSWORD }),
      });
      signupMs = round(performance.now() - t0);
      if (res.status !== 201) throw new Error(`signup: ${res.status} ${await res.text()}`);
      const cookie = (res.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
      const created = await fetch(`${first.url}/v1/keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie },
        body: '{}',
      });
      key = ((await created.json()) as { key: string }).key;
    } finally {
      await first.stop();
    }
    const runs: StartPhases[] = [];
    const baselineRunsMs: number[] = [];
    for (let i = 0; i < starts; i++) {
      // Interleaved, alternating which goes first, so the machine's load hits both alike.
      const order = i % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
      for (const which of order) {
        if (which === 'service') {
          const run = await timedStart(dataDir, env, key, `${origin}/realistic?start-${i}`);
          runs.push(run);
          log(
            `start ${i + 1}/${starts}: listening ${run.listeningMs} ms, ready ${run.readyMs} ms, ` +
              `first capture ${run.firstCaptureMs} ms`,
          );
        } else {
          const ms = await baselineRun(
            launchableBinary(executable),
            `${origin}/realistic?base-${i}`,
          );
          baselineRunsMs.push(ms);
          log(`baseline ${i + 1}/${starts}: ${ms} ms`);
        }
      }
    }
    const result: StartResult = {
      starts,
      runs,
      median: {
        listeningMs: median(runs.map((r) => r.listeningMs)),
        readyMs: median(runs.map((r) => r.readyMs)),
        firstCaptureMs: median(runs.map((r) => r.firstCaptureMs)),
      },
      baselineRunsMs,
      baselineMedianMs: median(baselineRunsMs),
      targetMet: median(runs.map((r) => r.firstCaptureMs)) <= TARGET_MS,
      signupMs,
    };
    log(
      `median: listening ${result.median.listeningMs} ms, ready ${result.median.readyMs} ms, ` +
        `first capture ${result.median.firstCaptureMs} ms; bare puppeteer ${result.baselineMedianMs} ms`,
    );
    return result;
  } finally {
    await site.close();
    await removeDataDir(dataDir);
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const result = await runStartBench({ quick: process.argv.includes('--quick') });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
