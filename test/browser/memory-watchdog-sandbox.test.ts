import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  findChromium,
  launchableBinary,
} from '../../src/adapters/browser/process/find-chromium.ts';
import { MemoryWatchdog } from '../../src/adapters/browser/process/memory-watchdog.ts';
import { killTree, rendererSandbox } from '../../src/adapters/browser/process/proc.ts';
import { silentLogger } from '../../src/lib/logger.ts';

/*
 * The watchdog's discovery on a real, sandboxed Chromium (its pure discovery tests are beside
 * it in src/adapters/browser/process/memory-watchdog.test.ts).
 */

/** Runs Chromium with its sandbox on: as uid 65534 when we are root, else as ourselves. */
function sandboxedChromiumCommand(): { command: string; args: string[] } | null {
  const found = findChromium();
  if (found === null) return null;
  // The binary itself, not a launcher script: the browser must be the process we spawn.
  const binary = launchableBinary(found);
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

/** Chromium's headless shell on about:blank, in its own process group, its profile in `dir`. */
function spawnHeadless(command: string, args: string[], dir: string) {
  return spawn(
    command,
    [
      ...args,
      '--headless',
      '--disable-gpu',
      '--no-first-run',
      `--user-data-dir=${join(dir, 'profile')}`,
      '--remote-debugging-port=0',
      'about:blank',
    ],
    { detached: true, stdio: 'ignore', env: { ...process.env, HOME: dir } },
  );
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
    const child = spawnHeadless(cmd.command, cmd.args, dir);
    const pid = child.pid as number;
    try {
      let renderers: number[] = [];
      for (let i = 0; i < 200 && renderers.length === 0; i++) {
        await sleep(100);
        // Discovery refreshes once a second; a fresh watchdog lists at once.
        const fresh = new MemoryWatchdog(pid, { limitBytes: 2 ** 40, logger: silentLogger });
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
      // What the service logs at each launch (docs/security.md): the kernel's own word, once
      // the renderer has started its sandbox (a renderer just forked has no filter yet).
      let state = rendererSandbox(pid);
      for (let i = 0; i < 50 && state !== 'on'; i++) {
        await sleep(100);
        state = rendererSandbox(pid);
      }
      assert.equal(state, 'on');

      const killer = new MemoryWatchdog(pid, { limitBytes: 1024, logger: silentLogger });
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

describe('rendererSandbox on a Chromium without its sandbox', () => {
  const found = findChromium();
  it('says off', { skip: found === null ? 'no Chromium' : false, timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shotsmith-unsandboxed-'));
    const child = spawnHeadless(launchableBinary(found as string), ['--no-sandbox'], dir);
    const pid = child.pid as number;
    try {
      let state: 'on' | 'off' | null = null;
      for (let i = 0; i < 200 && state === null; i++) {
        await sleep(100);
        state = rendererSandbox(pid);
      }
      assert.equal(state, 'off');
    } finally {
      await killTree(pid);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
