/**
 * The sweep of stale Chromium temp directories (`<temp root>/shotsmith-chromium-XXXXXX`) in a
 * temp root other local users can write to: it must neither hang on what they plant nor
 * remove what is theirs. Runs the sweep in a child process (a blocking read would stop this
 * one) with TMPDIR on a throw-away directory, so no real temp directory is touched.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';

const MODULE = resolve('src/adapters/browser/process/profile-dirs.ts');
const LOGGER = resolve('src/lib/logger.ts');
const DEAD_PID = 2 ** 22 + 12_345; // above pid_max's usual range: nobody

/** Runs sweepStaleProfiles in a child process; its exit code, or null if it hung. */
function sweep(tmp: string, dataDir: string, ms: number): Promise<number | null> {
  const code = `import { sweepStaleProfiles } from ${JSON.stringify(MODULE)};
import { silentLogger } from ${JSON.stringify(LOGGER)};
await sweepStaleProfiles(${JSON.stringify(dataDir)}, silentLogger);`;
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: 'inherit',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (status) => {
      clearTimeout(timer);
      done(status);
    });
  });
}

describe('the Chromium temp directory sweep', () => {
  const tmp = mkdtempSync('/tmp/ssw-');
  let dataDir = '';
  after(async () => {
    rmSync(tmp, { recursive: true, force: true });
    if (dataDir) await removeDataDir(dataDir);
  });

  /** A stale-looking temp dir of ours: mode 0700, old mtime. */
  function plant(name: string, owner: (dir: string) => void): string {
    const dir = join(tmp, `shotsmith-chromium-${name}`);
    mkdirSync(dir, { mode: 0o700 });
    owner(dir);
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(dir, old, old);
    return dir;
  }

  it('neither hangs on a FIFO or symlinked owner nor removes what is not ours', async () => {
    dataDir = await longDataDir('temp-sweep');
    const secret = join(tmp, 'secret');
    writeFileSync(secret, `${process.pid}\n`);
    const fifo = plant('fifo01', (dir) => execFileSync('mkfifo', [join(dir, 'owner')]));
    const linked = plant('link01', (dir) => symlinkSync(secret, join(dir, 'owner')));
    const zero = plant('zero01', (dir) => symlinkSync('/dev/zero', join(dir, 'owner')));
    const open = plant('open01', (dir) => writeFileSync(join(dir, 'owner'), `${DEAD_PID}\n`));
    chmodSync(open, 0o755);
    const root = process.getuid?.() === 0;
    const foreign = root
      ? plant('uid001', (dir) => {
          writeFileSync(join(dir, 'owner'), `${DEAD_PID}\n`);
          chownSync(join(dir, 'owner'), 65534, 65534);
          chownSync(dir, 65534, 65534);
        })
      : null;
    const mine = plant('mine01', (dir) => writeFileSync(join(dir, 'owner'), `${DEAD_PID}\n`));

    // A hang is what the failure looks like; the sweep itself takes milliseconds.
    const status = await sweep(tmp, dataDir, 30_000);
    assert.equal(status, 0, 'the sweep hung or failed');
    assert.equal(existsSync(mine), false, 'a stale directory of ours is removed');
    // Ours but with an owner file that is no regular file: no owner, old, so stale.
    assert.equal(existsSync(fifo), false);
    assert.equal(existsSync(zero), false);
    // A symlinked owner is not followed (it would name a live process: ours).
    assert.equal(existsSync(linked), false);
    assert.equal(existsSync(open), true, 'not mode 0700: not ours to remove');
    if (foreign) assert.equal(existsSync(foreign), true, "another user's directory is kept");
    assert.equal(existsSync(secret), true);
  });
});
