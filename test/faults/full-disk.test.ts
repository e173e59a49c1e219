/**
 * A data directory on a disk full to the last byte (a small tmpfs filled by a filler file):
 * every write answers 503 `storage_error` with Retry-After, never a 500 (the quota
 * reservation, records, images, sessions, keys); /healthz stays 200, /readyz says 503 and
 * leaves nothing behind; once space is freed the node serves again by itself and the
 * database is intact (docs/deployment.md, "When a dependency fails"; docs/errors.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { PASSWORD, uniqueEmail } from '../helpers/app.ts';
import { LONG_DATA_DIR_MIN } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../helpers/node-process.ts';
import { REQUIRE_SERVICES } from '../helpers/services.ts';

/** Room for the node's database, caches and Chromium profile (about 3 MB), and images. */
const DISK_BYTES = 32 * 2 ** 20;

/** Mounts a tmpfs of `bytes` on a fresh directory; a reason when this machine will not. */
async function mountSmallDisk(bytes: number): Promise<{ dir: string } | { skip: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
    // Also when the suite's hooks do not run (its tests filtered out, the run interrupted).
    process.once('exit', () => {
      try {
        execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
        execFileSync('rmdir', [dir], { stdio: 'pipe' });
      } catch {}
    });
    return { dir };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs here (needs root): ${String(err).split('\n')[0]}` };
  }
}

/** Writes `file` until the disk has not one byte left (large chunks, then single bytes). */
function fill(file: string): void {
  const fd = openSync(file, 'a');
  try {
    for (const size of [1 << 20, 1 << 12, 1]) {
      const chunk = Buffer.alloc(size, 0x61);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (err) {
          if ((err as { code?: string }).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** Files under `dir`, relative, but Chromium's profile and the compile cache (not ours to judge). */
async function files(dir: string): Promise<Set<string>> {
  const out = new Set<string>();
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const rel = path.relative(dir, path.join(entry.parentPath, entry.name));
    if (entry.isFile() && !/^(chromium|cache)\//.test(rel)) out.add(rel);
  }
  return out;
}

describe('a full disk', async () => {
  const mounted = await mountSmallDisk(DISK_BYTES);
  if ('skip' in mounted) {
    if (REQUIRE_SERVICES) {
      it('mounts a tmpfs', () => assert.fail(mounted.skip));
    } else {
      it('skipped', { skip: mounted.skip }, () => {});
    }
    return;
  }
  const disk = mounted.dir;
  // As long as every harness data directory (data-dir.ts).
  let dataDir = path.join(disk, 'Shotsmith data ü');
  while (dataDir.length <= LONG_DATA_DIR_MIN) dataDir = path.join(dataDir, 'a-long-directory-name');
  const filler = path.join(disk, 'filler');
  let site: FixtureSite;
  let node: NodeProcess;
  let key = '';
  let cookie = '';
  let width = 300;

  before(async () => {
    await mkdir(dataDir, { recursive: true });
    site = await startSite({ '/': page('<h1>room</h1>') });
    node = await startNode('full-disk', {
      DATA_DIR: dataDir,
      EGRESS_ALLOWLIST: site.hostPort,
    });
    ({ email, cookie, key } = await nodeAccount(node, { key: true }));
  });
  after(async () => {
    await node?.stop();
    await site?.close();
    try {
      execFileSync('umount', ['-l', disk], { stdio: 'pipe' });
    } catch {}
    await rm(disk, { recursive: true, force: true });
  });

  const capture = () =>
    node.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${site.origin}/`, width: width++, height: 200 },
    });
  const signup = () =>
    node.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email: uniqueEmail('full'), password: PASSWORD },
    });
  let email = '';
  const login = () =>
    node.fetch('/v1/auth/login', { method: 'POST', json: { email, password: PASSWORD } });
  const createKey = () => node.fetch('/v1/keys', { method: 'POST', cookie, json: {} });

  /** 503 storage_error with Retry-After, or (while SQLite still has room in its log) a success. */
  async function fullOrDone(res: Response): Promise<boolean> {
    const text = await res.text();
    if (res.status < 300) return false;
    assert.equal(res.status, 503, `${text}\n${node.output().slice(-2000)}`);
    assert.equal((JSON.parse(text) as { code: string }).code, 'storage_error', text);
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
    return true;
  }

  it('answers every write 503 storage_error with Retry-After; probes leave nothing', async () => {
    assert.equal((await capture()).status, 201);
    fill(filler);
    // Whether the reservation still finds room in the log or not, the image cannot be stored.
    assert.ok(await fullOrDone(await capture()), 'a capture is 503');
    // SQLite may still write into the room its write-ahead log already has (only after a
    // checkpoint, which this young log has not had: the first write fails here); key
    // creations and revocations would use it up, each answered 201 or 503, never anything
    // else, within the account's 600 requests a minute.
    let full = false;
    for (let i = 0; i < 250 && !full; i++) {
      const res = await createKey();
      full = await fullOrDone(res.clone());
      if (!full) {
        const { id } = (await res.json()) as { id: number };
        await fullOrDone(await node.fetch(`/v1/keys/${id}`, { method: 'DELETE', cookie }));
      }
    }
    assert.ok(full, 'writes fail once the log has no room left');
    fill(filler);
    // Each kind of write ends 503 once the room left in SQLite's log (a checkpoint may have
    // freed some meanwhile) is used up; until then a success, never anything else.
    const refused = async (write: () => Promise<Response>): Promise<boolean> => {
      for (let i = 0; i < 50; i++) {
        if (await fullOrDone(await write())) return true;
        fill(filler);
      }
      return false;
    };
    assert.ok(await refused(capture), 'a capture is 503');
    assert.ok(await refused(signup), 'a sign-up is 503');
    assert.ok(await refused(createKey), 'a key creation is 503');
    assert.ok(await refused(login), 'a login (a new session) is 503');

    assert.equal((await node.fetch('/healthz')).status, 200);
    // The refused writes above may have freed a page (a rolled-back journal, a temp image
    // removed): the disk is filled to its last byte again before the probes.
    fill(filler);
    const before = await files(dataDir);
    for (let i = 0; i < 5; i++) {
      const res = await node.fetch('/readyz');
      assert.equal(res.status, 503, await res.text());
    }
    assert.deepEqual(
      [...(await files(dataDir))].filter((f) => !before.has(f)),
      [],
    );
  });

  it('serves again once space is freed, the database intact', async () => {
    await unlink(filler);
    let res = await capture();
    for (let i = 0; i < 20 && res.status !== 201; i++) {
      await new Promise((r) => setTimeout(r, 250));
      res = await capture();
    }
    assert.equal(res.status, 201, await res.text());
    assert.equal((await signup()).status, 201);
    assert.equal((await createKey()).status, 201);
    assert.equal((await node.fetch('/readyz')).status, 200);
    const db = new DatabaseSync(path.join(dataDir, 'shotsmith.sqlite'), { readOnly: true });
    try {
      assert.deepEqual(
        db
          .prepare('PRAGMA integrity_check')
          .all()
          .map((r) => ({ ...r })),
        [{ integrity_check: 'ok' }],
      );
    } finally {
      db.close();
    }
  });
});
