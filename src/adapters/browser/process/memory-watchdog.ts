/**
 * Bounds the memory of each renderer of a browser. A page can allocate
 * without end in ways V8's heap limit does not see (ArrayBuffers, canvases, images, workers),
 * so the processes themselves are watched: several times a second their resident memory
 * (RssAnon + RssShmem, what they hold of their own) is read from /proc, and a process over the
 * bound is SIGKILLed. Chromium then reports the page as crashed, the capture on it fails, and
 * its context is thrown away; the browser and every other page live on.
 *
 * The GPU process is not watched: with --disable-gpu it composites our own captures (a 64 MP
 * one takes ~1.8 GiB there) rather than anything a page can grow; the browser-wide resident
 * bound (maxBrowserRssBytes) covers it and the browser process.
 *
 * Finding the processes is cheap: renderers are children of the zygotes,
 * which are children of the browser; `/proc/PID/task/TID/children` lists them without a scan
 * of all of /proc. With Chromium's sandbox on (not root) the zygotes nest: browser -> zygote
 * (sandbox init) -> zygote -> renderers, so zygotes are followed down to a few levels.
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Logger } from '../../../lib/logger.ts';
import type { BrowserInstance } from './browser-instance.ts';

/** How often the watched processes' memory is read. */
export const MEMORY_POLL_MS = 100;
/** How often the browser's own children (zygotes, utilities) are listed anew. */
const CHILDREN_REFRESH_MS = 1_000;
/** A page crash this soon after a kill counts as that kill. */
const KILL_ATTRIBUTION_MS = 10_000;

/** How deep zygotes may nest below the browser (sandboxed: 2). */
const MAX_ZYGOTE_DEPTH = 4;

type Kind = 'zygote' | 'renderer' | 'other';

/** Where the process tree is read from: /proc, or a synthetic tree in tests. */
export interface ProcReader {
  /** Children of a process (over all its threads unless `mainThreadOnly`). */
  children(pid: number, mainThreadOnly: boolean): number[];
  /** The raw command line ('' when gone). */
  cmdline(pid: number): string;
  /** Resident bytes the process holds of its own (0 when gone). */
  residentBytes(pid: number): number;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Children of a process, over all its threads (a child belongs to the thread that forked it). */
function childrenOf(pid: number, mainThreadOnly: boolean): number[] {
  let tids: string[];
  try {
    tids = mainThreadOnly ? [String(pid)] : readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const tid of tids) {
    const text = read(`/proc/${pid}/task/${tid}/children`);
    if (!text) continue;
    for (const part of text.split(' ')) if (part) out.push(Number(part));
  }
  return out;
}

function kindOf(cmdline: string): Kind {
  const type = /--type=([a-z-]+)/.exec(cmdline)?.[1];
  if (type === 'zygote') return 'zygote';
  if (type === 'renderer') return 'renderer';
  return 'other';
}

/** RssAnon + RssShmem in bytes, 0 when the process is gone. */
export function residentBytes(pid: number): number {
  const text = read(`/proc/${pid}/status`);
  if (text === null) return 0;
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text)?.[1] ?? 0);
  return (kib('RssAnon') + kib('RssShmem')) * 1024;
}

const procfs: ProcReader = {
  children: childrenOf,
  cmdline: (pid) => read(`/proc/${pid}/cmdline`) ?? '',
  residentBytes,
};

export interface MemoryWatchdogOptions {
  /** Resident bytes a renderer may hold. */
  limitBytes: number;
  logger: Logger;
  /** The process tree's source (tests); /proc by default. */
  proc?: ProcReader;
}

export class MemoryWatchdog {
  readonly limitBytes: number;
  readonly #rootPid: number;
  readonly #logger: Logger;
  readonly #proc: ProcReader;
  readonly #kinds = new Map<number, Kind>();
  /** The browser's own zygote children (nested zygotes are found below them each round). */
  #zygotes: number[] = [];
  #childrenAt = 0;
  #timer: NodeJS.Timeout | null = null;
  #lastKill = Number.NEGATIVE_INFINITY;
  /** Processes killed for memory so far. */
  kills = 0;

  constructor(rootPid: number, options: MemoryWatchdogOptions) {
    this.#rootPid = rootPid;
    this.limitBytes = options.limitBytes;
    this.#logger = options.logger;
    this.#proc = options.proc ?? procfs;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => this.check(), MEMORY_POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Whether a process was killed for memory lately (a page crash now is most likely that). */
  killedLately(): boolean {
    return Date.now() - this.#lastKill <= KILL_ATTRIBUTION_MS;
  }

  /** One round: reads every watched process's memory and kills those over the bound. */
  check(): void {
    const now = Date.now();
    if (now - this.#childrenAt >= CHILDREN_REFRESH_MS) {
      this.#childrenAt = now;
      const children = this.#proc.children(this.#rootPid, false);
      this.#zygotes = children.filter((pid) => this.#kind(pid, false) === 'zygote');
      // Forget pids that are gone (a later process may get the number).
      const alive = new Set(children);
      this.#walk(this.#zygotes, 1, (pid) => alive.add(pid));
      for (const pid of this.#kinds.keys()) if (!alive.has(pid)) this.#kinds.delete(pid);
    }
    this.#walk(this.#zygotes, 1, (pid, kind) => {
      if (kind === 'renderer') this.#watch(pid);
    });
  }

  /** Renderers currently found below the browser (nested zygotes included). */
  renderers(): number[] {
    const out: number[] = [];
    this.#walk(this.#zygotes, 1, (pid, kind) => {
      if (kind === 'renderer') out.push(pid);
    });
    return out;
  }

  /** Visits the children of the zygotes, following zygotes that forked zygotes. */
  #walk(zygotes: number[], depth: number, visit: (pid: number, kind: Kind) => void): void {
    for (const zygote of zygotes) {
      const nested: number[] = [];
      for (const pid of this.#proc.children(zygote, true)) {
        const kind = this.#kind(pid, true);
        visit(pid, kind);
        if (kind === 'zygote') nested.push(pid);
      }
      if (nested.length > 0 && depth < MAX_ZYGOTE_DEPTH) this.#walk(nested, depth + 1, visit);
    }
  }

  #kind(pid: number, zygoteChild: boolean): Kind {
    let kind = this.#kinds.get(pid);
    if (kind === undefined) {
      kind = kindOf(this.#proc.cmdline(pid));
      // A zygote's child starts with the zygote's command line and only then renames itself
      // (--type=renderer): until it has, ask again next time. (A nested zygote, which keeps its
      // name, is thus read again each round: one small file.)
      if (kind !== 'zygote' || !zygoteChild) this.#kinds.set(pid, kind);
    }
    return kind;
  }

  #watch(pid: number): void {
    const bytes = this.#proc.residentBytes(pid);
    if (bytes <= this.limitBytes) return;
    this.#lastKill = Date.now();
    this.kills++;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // already gone
    }
    this.#kinds.delete(pid);
    this.#logger.warn(
      {
        pid,
        residentMiB: Math.round(bytes / 2 ** 20),
        limitMiB: Math.round(this.limitBytes / 2 ** 20),
      },
      'a renderer used too much memory; killed it',
    );
  }
}

const watchdogs = new WeakMap<BrowserInstance, MemoryWatchdog>();

/** The watchdog of a browser, started on first use and stopped when the browser goes away. */
export function watchdogFor(
  instance: BrowserInstance,
  options: MemoryWatchdogOptions,
): MemoryWatchdog {
  let watchdog = watchdogs.get(instance);
  if (watchdog === undefined) {
    const created = new MemoryWatchdog(instance.pid, options);
    watchdog = created;
    watchdogs.set(instance, created);
    if (instance.browser.connected) {
      created.start();
      instance.browser.once('disconnected', () => created.stop());
    }
  }
  return watchdog;
}
