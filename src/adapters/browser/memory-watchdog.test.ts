import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { findChromium } from './find-chromium.ts';
import { MemoryWatchdog, type ProcReader } from './memory-watchdog.ts';
import { killTree } from './proc.ts';

/** A synthetic process tree: pid -> [parent, command line]. */
function fakeProc(tree: Record<number, [number, string]>): ProcReader {
  return {
    children: (pid) =>
      Object.entries(tree)
        .filter(([, [parent]]) => parent === pid)
        .map(([child]) => Number(child)),
    cmdline: (pid) => tree[pid]?.[1] ?? '',
    residentBytes: () => 0,
  };
}

const chromium = '/usr/lib/chromium/chromium\0';

describe('MemoryWatchdog discovery', () => {
  it('finds renderers below nested zygotes (the sandboxed tree)', () => {
    const proc = fakeProc({
      11: [10, `${chromium}--type=zygote\0--no-zygote-sandbox\0`],
      12: [11, `${chromium}--type=gpu-process\0`],
      13: [10, `${chromium}--type=zygote\0`], // sandbox init
      14: [13, `${chromium}--type=zygote\0`], // the real zygote
      15: [14, `${chromium}--type=renderer\0`],
      16: [14, `${chromium}--type=utility\0`],
      17: [14, `${chromium}--type=renderer\0`],
      18: [10, `${chromium}--type=utility\0`],
    });
    const watchdog = new MemoryWatchdog(10, { limitBytes: 2 ** 30, proc });
    watchdog.check();
    assert.deepEqual(watchdog.renderers().sort(), [15, 17]);
  });

  it('finds renderers of an unsandboxed zygote and one that renamed itself late', () => {
    const tree: Record<number, [number, string]> = {
      11: [10, `${chromium}--type=zygote\0--no-sandbox\0`],
      12: [11, `${chromium}--type=renderer\0`],
      // Forked, not yet renamed: still shows the zygote's command line.
      13: [11, `${chromium}--type=zygote\0--no-sandbox\0`],
    };
    const watchdog = new MemoryWatchdog(10, { limitBytes: 2 ** 30, proc: fakeProc(tree) });
    watchdog.check();
    assert.deepEqual(watchdog.renderers(), [12]);
    tree[13] = [11, `${chromium}--type=renderer\0`];
    watchdog.check();
    assert.deepEqual(watchdog.renderers().sort(), [12, 13]);
  });
});

/** Runs Chromium with its sandbox on: as uid 65534 when we are root, else as ourselves. */
function sandboxedChromiumCommand(): { command: string; args: string[] } | null {
  const binary = findChromium();
  if (binary === null) return null;
  if (process.getuid?.() !== 0) return { command: binary, args: [] };
  if (!existsSync('/usr/bin/setpriv')) return null;
  return {
    command: '/usr/bin/setpriv',
    args: ['--reuid=65534', '--regid=65534', '--clear-groups', binary],
  };
}

function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function typeOf(pid: number): string | undefined {
  return /--type=([a-z-]+)/.exec(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))?.[1];
}

describe('MemoryWatchdog on a sandboxed Chromium', () => {
  const command = sandboxedChromiumCommand();
  it('watches and kills the renderers of nested zygotes', {
    skip: command === null ? 'no Chromium or setpriv' : false,
    timeout: 60_000,
  }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shotsmith-sandboxed-'));
    if (process.getuid?.() === 0) chownSync(dir, 65534, 65534);
    const cmd = command as { command: string; args: string[] };
    const child = spawn(
      cmd.command,
      [
        ...cmd.args,
        '--headless=new',
        '--disable-gpu',
        '--no-first-run',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--remote-debugging-port=0',
        'about:blank',
      ],
      { detached: true, stdio: 'ignore', env: { ...process.env, HOME: dir } },
    );
    const pid = child.pid as number;
    try {
      let renderers: number[] = [];
      for (let i = 0; i < 200 && renderers.length === 0; i++) {
        await sleep(100);
        // Discovery refreshes once a second; a fresh watchdog lists at once.
        const fresh = new MemoryWatchdog(pid, { limitBytes: 2 ** 40 });
        fresh.check();
        renderers = fresh.renderers();
      }
      assert.ok(renderers.length > 0, 'no renderer found below the sandboxed browser');
      const renderer = renderers[0] as number;
      assert.equal(typeOf(renderer), 'renderer');
      // The point of the test: the sandbox nests the zygotes.
      const zygote = parentOf(renderer);
      assert.equal(typeOf(zygote), 'zygote');
      assert.equal(typeOf(parentOf(zygote)), 'zygote', 'the sandbox did not nest the zygotes');
      assert.equal(parentOf(parentOf(zygote)), pid);

      const killer = new MemoryWatchdog(pid, { limitBytes: 1024 });
      killer.check();
      assert.ok(killer.kills > 0, 'no renderer was killed');
      for (let i = 0; i < 50 && existsSync(`/proc/${renderer}/cmdline`); i++) await sleep(100);
      const stat = existsSync(`/proc/${renderer}/stat`)
        ? readFileSync(`/proc/${renderer}/stat`, 'utf8')
        : '';
      assert.ok(stat === '' || / Z /.test(stat), 'the renderer is still alive');
    } finally {
      await killTree(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
