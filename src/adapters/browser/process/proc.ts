/**
 * Linux /proc helpers for the Chromium process tree: who belongs to it, how much memory it holds,
 * and how to end all of it. Everything here tolerates processes vanishing mid-scan.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** State letter from /proc/PID/stat: R, S, D, Z (zombie), ... */
  state: string;
  /** Start time in clock ticks since boot: with the pid, names one process (pids are reused). */
  startTime: string;
  /** CPU time used (user + system), in ms. */
  cpuMs: number;
  /** CPU time of its children that exited and were waited for, in ms. */
  exitedChildrenCpuMs: number;
}

/** /proc reports CPU time in clock ticks of USER_HZ, which Linux fixes at 100 a second. */
const MS_PER_TICK = 10;

/** Parses /proc/PID/stat; the command name may contain spaces and parentheses. */
function readStat(pid: number): ProcInfo | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  const close = text.lastIndexOf(')');
  if (close === -1) return null;
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgid: Number(fields[2]),
    startTime: fields[19] ?? '',
    cpuMs: (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK,
    exitedChildrenCpuMs: (Number(fields[13]) + Number(fields[14])) * MS_PER_TICK,
  };
}

function allPids(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c >= 48 && c <= 57) out.push(Number(name));
  }
  return out;
}

export function listProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const pid of allPids()) {
    const info = readStat(pid);
    if (info) out.push(info);
  }
  return out;
}

/**
 * The browser's processes: members of its process group plus every descendant by parent link
 * (a child that moved to another group is still found). Zombies included. Root first, then
 * by depth, so callers can end the tree from the leaves up.
 */
export function processTree(
  rootPid: number,
  procs: ProcInfo[] = listProcesses(),
  includeRoot = true,
): ProcInfo[] {
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of procs) {
    const list = byParent.get(p.ppid);
    if (list) list.push(p);
    else byParent.set(p.ppid, [p]);
  }
  const seen = new Set<number>();
  const out: ProcInfo[] = [];
  const root = includeRoot ? procs.find((p) => p.pid === rootPid) : undefined;
  const frontier: ProcInfo[] = root ? [root] : [];
  // Group members whose parent already died (reparented to init) are still ours.
  for (const p of procs) if (p.pgid === rootPid && p.pid !== rootPid) frontier.push(p);
  while (frontier.length > 0) {
    const p = frontier.shift() as ProcInfo;
    if (seen.has(p.pid)) continue;
    seen.add(p.pid);
    out.push(p);
    for (const child of byParent.get(p.pid) ?? []) frontier.push(child);
  }
  return out;
}

/** A process's command line, arguments joined by spaces; '' when it is gone (or a zombie). */
export function readCmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * What a Chromium process is: its `--type` (`renderer`, `zygote`, `gpu-process`), a utility
 * by its service (`utility:network`), else its program's name (`chromium` for the browser
 * process itself); null when it is gone.
 */
export function processKind(pid: number): string | null {
  // Chromium rewrites its command line as one space-separated title.
  const line = readCmdline(pid);
  if (line === '') return null;
  const args = line.split(/ +/);
  const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const type = flag('type');
  const service = flag('utility-sub-type')?.split('.')[0];
  if (!type) return path.basename(args[0] ?? '?');
  return type === 'utility' && service ? `utility:${service}` : type;
}

/** Live processes whose command line mentions `needle` (zombies have no command line). */
export function processesMentioning(needle: string): number[] {
  const out: number[] = [];
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    if (readCmdline(pid).includes(needle)) out.push(pid);
  }
  return out;
}

interface Memory {
  rss: number;
  anon: number;
}

/** VmRSS and RssAnon in bytes; zeros when the process is gone or a zombie. */
function memory(pid: number): Memory {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return { rss: 0, anon: 0 };
  }
  const kib = (field: string): number => {
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return match ? Number(match[1]) * 1024 : 0;
  };
  return { rss: kib('VmRSS'), anon: kib('RssAnon') };
}

export interface TreeUsage {
  processes: number;
  /**
   * Summed Pss from /proc/PID/smaps_rollup (each shared page divided among the processes
   * mapping it): what the tree really costs the machine. Only with `{ pss: true }` (reading
   * smaps_rollup walks every mapping, far dearer than a status file); 0 otherwise.
   */
  pssBytes: number;
  /** Summed VmRSS: counts the shared Chromium binary and libraries once per process. */
  rssBytes: number;
  /** Summed RssAnon: the processes' own heap memory, what grows when something leaks. */
  anonBytes: number;
}

/** Pss of one process in bytes (/proc/PID/smaps_rollup); 0 when it is gone or a zombie. */
export function pssOf(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return 0;
  }
  const match = /^Pss:\s+(\d+)\s+kB/m.exec(text);
  return match ? Number(match[1]) * 1024 : 0;
}

/**
 * Live process count and memory of a browser's tree (cheap: one status file per process;
 * `pss` adds each process's smaps_rollup).
 */
export function treeUsage(rootPid: number, options: { pss?: boolean } = {}): TreeUsage {
  const usage: TreeUsage = { processes: 0, rssBytes: 0, anonBytes: 0, pssBytes: 0 };
  for (const p of processTree(rootPid)) {
    if (p.state === 'Z') continue;
    const m = memory(p.pid);
    usage.processes++;
    usage.rssBytes += m.rss;
    usage.anonBytes += m.anon;
    if (options.pss) usage.pssBytes += pssOf(p.pid);
  }
  return usage;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // ESRCH: already gone.
  }
}

/**
 * SIGKILLs a browser's whole tree, leaves first, giving each parent a moment to reap its
 * children so that as few zombies as possible are left to init. The group kill at the end
 * catches anything that appeared meanwhile.
 *
 * `rootReaped`: the root already exited and was reaped, so its pid may belong to someone else
 * now; only its group members (which keep the pgid from being reused) are touched.
 */
export async function killTree(
  rootPid: number,
  rootReaped = false,
  reapWaitMs = 150,
): Promise<void> {
  const tree = processTree(rootPid, listProcesses(), !rootReaped);
  if (tree.length === 0) return;
  const depth = new Map<number, number>([[rootPid, 0]]);
  for (const p of tree) if (!depth.has(p.pid)) depth.set(p.pid, (depth.get(p.ppid) ?? 0) + 1);
  const levels = [...new Set(depth.values())].sort((a, b) => b - a);
  for (const level of levels) {
    const pids = tree.filter((p) => depth.get(p.pid) === level && p.state !== 'Z');
    if (pids.length === 0) continue;
    for (const p of pids) signal(p.pid, 'SIGKILL');
    const until = Date.now() + reapWaitMs;
    while (Date.now() < until && pids.some((p) => readStat(p.pid) !== null)) await sleep(10);
  }
  try {
    process.kill(-rootPid, 'SIGKILL');
  } catch {
    // No group left.
  }
}

/**
 * Whether a pid names a live (non-zombie) process; with `startTime`, whether it is still the
 * same process and not a later one that got the pid (a container restart reuses low pids).
 */
export function isAlive(pid: number, startTime?: string): boolean {
  const info = readStat(pid);
  if (info === null || info.state === 'Z') return false;
  return startTime === undefined || info.startTime === startTime;
}

/** This process's start time, as isAlive compares it. */
export function ownStartTime(): string | undefined {
  return readStat(process.pid)?.startTime || undefined;
}

/**
 * Whether a browser's renderers run in Chromium's sandbox, read from what the kernel says of
 * them: a sandboxed renderer runs under a seccomp filter (`Seccomp: 2` in /proc/PID/status),
 * one started with `--no-sandbox` under none (0). 'off' when any renderer is unfiltered, 'on'
 * when all are filtered, null when the browser has no renderer to look at (or no /proc).
 */
export function rendererSandbox(rootPid: number): 'on' | 'off' | null {
  let seen = false;
  for (const p of processTree(rootPid)) {
    if (processKind(p.pid) !== 'renderer') continue;
    const mode = seccompMode(p.pid);
    if (mode === null) continue;
    if (mode === 0) return 'off';
    seen = true;
  }
  return seen ? 'on' : null;
}

/** A process's seccomp mode (0 none, 1 strict, 2 filter); null when it is gone. */
export function seccompMode(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mode = /^Seccomp:\s+(\d)/m.exec(status)?.[1];
    return mode === undefined ? null : Number(mode);
  } catch {
    return null;
  }
}
