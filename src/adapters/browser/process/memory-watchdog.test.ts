import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { silentLogger } from '../../../lib/logger.ts';
import { MemoryWatchdog, type ProcReader } from './memory-watchdog.ts';

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
    const watchdog = new MemoryWatchdog(10, { limitBytes: 2 ** 30, proc, logger: silentLogger });
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
    const watchdog = new MemoryWatchdog(10, {
      limitBytes: 2 ** 30,
      proc: fakeProc(tree),
      logger: silentLogger,
    });
    watchdog.check();
    assert.deepEqual(watchdog.renderers(), [12]);
    tree[13] = [11, `${chromium}--type=renderer\0`];
    watchdog.check();
    assert.deepEqual(watchdog.renderers().sort(), [12, 13]);
  });
});
