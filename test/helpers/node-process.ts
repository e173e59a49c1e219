import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from './app.ts';
import { longDataDir, removeDataDir } from './data-dir.ts';

const MAIN = path.resolve(import.meta.dirname, '..', '..', 'src', 'main.ts');
const READY_TIMEOUT_MS = 60_000;

/** A service node running as its own process (`node src/main.ts`), as in production. */
export interface NodeProcess {
  name: string;
  url: string;
  port: number;
  /** The node's process id (its Chromium runs below it). */
  pid: number;
  /** Its DATA_DIR (longer than LONG_DATA_DIR_MIN characters, like every harness data dir). */
  dataDir: string;
  /** What the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code once the process has exited (null: ended by a signal). */
  exited: Promise<number | null>;
  fetch(path: string, init?: RequestInit & { json?: unknown; cookie?: string }): Promise<Response>;
  /** SIGTERM, then SIGKILL after a grace period; removes its data directory. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test process that dies must not leave nodes (and their browsers) behind.
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts a node with `env` on top of a test baseline (loopback only, fast password
 * hashing, one render slot: the machine has two cores) and waits until it listens.
 * `ready` (default true) also waits for /readyz, i.e. the browser is up. `dataDirLength`: the
 * data directory's path is longer than this (default LONG_DATA_DIR_MIN, 120).
 */
/**
 * What every spawned service process gets: loopback on `port`, its data dir, warn logs, a
 * fast password hash, and nothing else of the caller's environment but PATH and HOME.
 */
export function serviceEnv(options: { port: number; dataDir: string }): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? options.dataDir,
    HOST: '127.0.0.1',
    PORT: String(options.port),
    PUBLIC_URL: `http://127.0.0.1:${options.port}`,
    DATA_DIR: options.dataDir,
    LOG_LEVEL: 'warn',
    PASSWORD_HASH_COST: '12',
  };
}

export async function startNode(
  name: string,
  env: Record<string, string>,
  options: { ready?: boolean; dataDirLength?: number } = {},
): Promise<NodeProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const dataDir = await longDataDir(name, options.dataDirLength);
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...serviceEnv({ port, dataDir }),
      NODE_ENV: 'test',
      RENDER_CONCURRENCY: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += String(chunk);
  });
  child.stderr?.on('data', (chunk) => {
    output += String(chunk);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve(code);
    });
  });
  let gone = false;
  void exited.then(() => {
    gone = true;
  });

  const node: NodeProcess = {
    name,
    url,
    port,
    pid: child.pid ?? 0,
    dataDir,
    output: () => output,
    exited,
    fetch: (p, init = {}) => {
      const { json, cookie, headers, ...rest } = init;
      const h = new Headers(headers);
      if (json !== undefined) h.set('content-type', 'application/json');
      if (cookie) h.set('cookie', cookie);
      return fetch(`${url}${p}`, {
        ...rest,
        headers: h,
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
    stop: async () => {
      if (!gone) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      await removeDataDir(dataDir);
    },
  };

  const probe = options.ready === false ? '/healthz' : '/readyz';
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (gone) {
      await node.stop();
      throw new Error(`node ${name} exited during start:\n${output}`);
    }
    const res = await fetch(`${url}${probe}`).catch(() => null);
    if (res?.status === 200) break;
    await res?.body?.cancel();
    if (Date.now() > deadline) {
      await node.stop();
      throw new Error(`node ${name} not ready within ${READY_TIMEOUT_MS} ms:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return node;
}

/** A process and every process below it (its Chromium), killed at once: a node that dies. */
export function killTree(pid: number): void {
  const children = (parent: number): number[] =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((p) => {
        try {
          return (
            Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]) === parent
          );
        } catch {
          return false;
        }
      });
  const all: number[] = [];
  const walk = (p: number) => {
    all.push(p);
    for (const c of children(p)) walk(c);
  };
  walk(pid);
  for (const p of all) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
}
