/**
 * The browser's life: a crash mid-capture, recycling by count and by memory, the sweep of
 * profiles left by an earlier run, and a close that leaves no process and no directory behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createChromiumRenderer } from '../../src/adapters/browser/pool/chromium-renderer.ts';
import { isAlive } from '../../src/adapters/browser/process/proc.ts';
import { chromiumTempRoot } from '../../src/adapters/browser/process/profile-dirs.ts';
import { silentLogger } from '../../src/lib/logger.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { renderSettings } from '../helpers/render-settings.ts';
import {
  browserPid,
  chromiumProcesses,
  rejectsWith,
  rendererPids,
  renderOptions,
  startRenderer,
  type TestRenderer,
  tempDirs,
} from './helpers.ts';

async function until(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await sleep(50);
  assert.ok(condition(), 'condition not reached in time');
}

const profiles = (dataDir: string): string[] => {
  const dir = join(dataDir, 'chromium');
  return existsSync(dir) ? readdirSync(dir) : [];
};

describe('browser lifecycle', () => {
  let site: FixtureSite;
  const held = new Set<ServerResponse>();

  before(async () => {
    site = await startSite({
      '/ok': page('<p>ok</p>'),
      '/held': (_req, res) => {
        held.add(res);
        res.on('close', () => held.delete(res));
      },
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    await site?.close();
  });

  describe('crash', () => {
    let t: TestRenderer;
    before(async () => {
      t = await startRenderer({ concurrency: 2 });
    });
    after(async () => {
      await t?.close();
    });

    it('SIGKILL of Chromium mid-capture fails that capture (503); the next one succeeds', async () => {
      const oldPid = browserPid(t.dataDir);
      const [oldProfile] = profiles(t.dataDir);
      const [oldTemp] = tempDirs(t.dataDir);
      const capture = t.render({ url: `${site.origin}/held` }, 20_000);
      await until(() => held.size === 1);
      process.kill(oldPid, 'SIGKILL');
      const started = Date.now();
      // docs/security.md: a capture is never a 500 because of the browser.
      const err = await rejectsWith(capture, 'overloaded', /browser crashed/);
      assert.match(err.headers?.['Retry-After'] ?? '', /^\d+$/);
      assert.ok(Date.now() - started < 5_000, 'failed promptly');
      const next = await t.render({ url: `${site.origin}/ok` }, 20_000);
      assert.equal(next.targetStatus, 200);
      assert.equal(t.renderer.stats().restarts, 1);
      assert.equal(t.renderer.ready(), true);
      assert.notEqual(browserPid(t.dataDir), oldPid);
      // The dead browser's tree and profile are gone.
      await until(() => !profiles(t.dataDir).includes(oldProfile as string));
      await until(() => !existsSync(oldTemp as string));
      assert.equal(isAlive(oldPid), false);
    });
  });

  it('a renderer process killed mid-capture fails that capture; the next one succeeds', async () => {
    const t = await startRenderer({ concurrency: 1 });
    try {
      const capture = rejectsWith(
        t.render({ url: `${site.origin}/held` }, 20_000),
        'internal_error',
        /page crashed/,
      );
      await until(() => held.size >= 1);
      // Every renderer of ours: the capturing page's and those of idle pages alike.
      for (const pid of rendererPids(t.dataDir)) process.kill(pid, 'SIGKILL');
      await capture;
      const next = await t.render({ url: `${site.origin}/ok` });
      assert.equal(next.targetStatus, 200);
      assert.equal(t.renderer.stats().restarts, 0, 'the browser itself was not restarted');
    } finally {
      await t.close();
    }
  });

  it('a URL that is not http(s) never reaches Chromium', async () => {
    const t = await startRenderer({ concurrency: 1 });
    try {
      for (const url of ['file:///etc/passwd', 'chrome://version', 'javascript:alert(1)']) {
        await rejectsWith(t.render({ url }), 'url_not_allowed');
      }
    } finally {
      await t.close();
    }
  });

  it('close() leaves no process and no profile behind; later renders are refused', async () => {
    const t = await startRenderer({ concurrency: 2 });
    try {
      await t.render({ url: `${site.origin}/ok` });
      assert.ok(chromiumProcesses(t.dataDir).length > 2);
      const temps = tempDirs(t.dataDir);
      assert.equal(temps.length, 1);
      await t.renderer.close();
      assert.deepEqual(chromiumProcesses(t.dataDir, temps), []);
      assert.deepEqual(profiles(t.dataDir), []);
      assert.deepEqual(temps.filter(existsSync), [], 'temp dir removed');
      assert.equal(t.renderer.ready(), false);
      await rejectsWith(t.render({ url: `${site.origin}/ok` }), 'overloaded');
    } finally {
      await t.close();
    }
  });

  it('close() during a capture fails it as overloaded (503) and still cleans up', async () => {
    const t = await startRenderer({ concurrency: 1 });
    try {
      const capture = rejectsWith(t.render({ url: `${site.origin}/held` }, 20_000), 'overloaded');
      await until(() => held.size >= 1);
      const temps = tempDirs(t.dataDir);
      await t.renderer.close();
      await capture;
      assert.deepEqual(chromiumProcesses(t.dataDir, temps), []);
      assert.deepEqual(profiles(t.dataDir), []);
      assert.deepEqual(temps.filter(existsSync), [], 'temp dir removed');
    } finally {
      await t.close();
    }
  });

  it('start sweeps profiles and temp dirs of dead owners, killing their processes, and keeps live ones', async () => {
    const dataDir = await longDataDir('browser-sweep');
    const stale = join(dataDir, 'chromium', 'stale');
    const live = join(dataDir, 'chromium', 'live');
    mkdirSync(join(stale, 'profile'), { recursive: true });
    mkdirSync(live, { recursive: true });
    // An owner that has exited: its pid is not alive any more.
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => gone.once('exit', resolve));
    writeFileSync(join(stale, 'owner'), `${gone.pid}\n`);
    writeFileSync(join(live, 'owner'), `${process.pid}\n`);
    // Temp dirs: one the stale profile recorded, one of another (dead) data dir, one live.
    const tempOf = (owner: number | undefined): string => {
      const dir = mkdtempSync(join(chromiumTempRoot(), 'shotsmith-chromium-'));
      writeFileSync(join(dir, 'owner'), `${owner}\n`);
      return dir;
    };
    const staleTemp = tempOf(gone.pid);
    const orphanTemp = tempOf(gone.pid);
    const liveTemp = tempOf(process.pid);
    writeFileSync(join(stale, 'tmpdir'), `${staleTemp}\n`);
    // A leftover process on a temp dir (stands in for a crashpad handler, outside the group).
    const handler = spawn(
      process.execPath,
      // After `--`: Node would refuse the flag as its own option and exit at once.
      ['-e', 'setTimeout(() => {}, 60000)', '--', `--database=${staleTemp}/.config`],
      { detached: true, stdio: 'ignore' },
    );
    // A leftover process still running on the stale profile (stands in for an orphaned Chromium).
    const orphan = spawn(
      process.execPath,
      ['-e', 'setTimeout(() => {}, 60000)', '--', `--user-data-dir=${stale}/profile`],
      {
        detached: true,
        stdio: 'ignore',
      },
    );
    await until(() => orphan.pid !== undefined && isAlive(orphan.pid));
    await until(() => handler.pid !== undefined && isAlive(handler.pid));
    const renderer = await createChromiumRenderer({
      render: renderSettings({ concurrency: 1, queueSize: 1, maxPageHeight: 16_384 }),
      dataDir,
      logger: silentLogger,
    });
    try {
      assert.equal(existsSync(stale), false, 'stale profile removed');
      assert.equal(existsSync(live), true, 'profile of a live owner kept');
      assert.equal(existsSync(staleTemp), false, 'recorded temp dir removed');
      assert.equal(existsSync(orphanTemp), false, 'temp dir of a dead owner removed');
      assert.equal(existsSync(liveTemp), true, 'temp dir of a live owner kept');
      await until(() => !isAlive(orphan.pid as number));
      await until(() => !isAlive(handler.pid as number));
    } finally {
      await renderer.close();
      await removeDataDir(dataDir);
      rmSync(liveTemp, { recursive: true, force: true });
    }
  });

  it('contexts and browsers are recycled by count; every capture still succeeds', async () => {
    const t = await startRenderer({ concurrency: 1, recycleAfter: 2, browserRecycleAfter: 4 });
    try {
      const first = browserPid(t.dataDir);
      // A replacement launches in the background while captures go on, so count captures
      // until two replacements happened (about 4 captures each, plus launch time).
      let captures = 0;
      while (t.renderer.stats().restarts < 2 && captures < 40) {
        const result = await t.render({ url: `${site.origin}/ok` });
        assert.equal(result.targetStatus, 200);
        captures++;
      }
      assert.ok(t.renderer.stats().restarts >= 2, `restarts: ${t.renderer.stats().restarts}`);
      await t.render({ url: `${site.origin}/ok` });
      assert.notEqual(browserPid(t.dataDir), first);
      // Replaced browsers are closed once drained: one profile, one browser left.
      await until(() => profiles(t.dataDir).length === 1);
      assert.equal(isAlive(first), false);
    } finally {
      await t.close();
    }
  });

  it('a browser over its memory limit is replaced before the old one closes', async () => {
    const t = await startRenderer({ concurrency: 1, maxBrowserRssBytes: 1 });
    try {
      const first = browserPid(t.dataDir);
      await t.render({ url: `${site.origin}/ok` });
      await until(() => t.renderer.stats().restarts >= 1);
      await until(() => !isAlive(first));
      const result = await t.renderer.render(renderOptions({ url: `${site.origin}/ok` }), {
        deadline: Date.now() + 15_000,
      });
      assert.equal(result.targetStatus, 200);
    } finally {
      await t.close();
    }
  });
});
