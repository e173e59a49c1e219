import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { listProcesses, processKind } from '../../src/adapters/browser/process/proc.ts';

const self = () => {
  const me = listProcesses().find((p) => p.pid === process.pid);
  assert.ok(me, 'this process is listed');
  return me;
};

/**
 * A child Node process named `argv0`, with `args` after `--` on its command line, idle until
 * killed.
 */
function idleChild(args: string[], argv0 = process.execPath) {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...args], {
    argv0,
    stdio: 'ignore',
  });
}

describe('processKind', () => {
  it("names a process without --type by its program's name", async () => {
    const child = idleChild(['--lang=en-US'], '/opt/some-dir/shotsmith-probe');
    try {
      await once(child, 'spawn');
      assert.equal(processKind(child.pid as number), 'shotsmith-probe');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('reads --type, and a utility by its service', async () => {
    const children = [
      idleChild(['--type=renderer', '--lang=en-US']),
      idleChild(['--type=utility', '--utility-sub-type=network.mojom.NetworkService']),
    ];
    try {
      await Promise.all(children.map((c) => once(c, 'spawn')));
      const [renderer, utility] = children.map((c) => c.pid as number);
      assert.equal(processKind(renderer as number), 'renderer');
      assert.equal(processKind(utility as number), 'utility:network');
    } finally {
      for (const c of children) c.kill('SIGKILL');
    }
  });

  it('is null for a process that is gone', async () => {
    const child = idleChild([]);
    await once(child, 'spawn');
    const pid = child.pid as number;
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.equal(processKind(pid), null);
  });
});

describe('listProcesses: CPU time', () => {
  it("counts this process's own CPU time", () => {
    const before = self().cpuMs;
    const start = process.cpuUsage();
    // Busy until this process has used 300 ms of CPU, however slow the machine.
    while (process.cpuUsage(start).user < 300_000) {}
    const gained = self().cpuMs - before;
    assert.ok(gained >= 200, `gained ${gained} ms, expected about 300`);
  });

  it("counts an exited child's CPU time as its children's, once it is reaped", async () => {
    const before = self().exitedChildrenCpuMs;
    const child = spawn(
      process.execPath,
      ['-e', 'const s = process.cpuUsage(); while (process.cpuUsage(s).user < 300000) {}'],
      { stdio: 'ignore' },
    );
    const [code] = await once(child, 'exit');
    assert.equal(code, 0);
    const gained = self().exitedChildrenCpuMs - before;
    assert.ok(gained >= 200, `gained ${gained} ms, expected at least 300`);
  });
});
