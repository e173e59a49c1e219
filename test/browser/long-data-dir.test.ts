/**
 * Any data directory (docs/security.md): nothing Chromium needs depends on the length of
 * DATA_DIR. The harness itself hands out long data directories, so every other test runs on one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp } from '../helpers/app.ts';
import { LONG_DATA_DIR_MIN, longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startNode } from '../helpers/node-process.ts';
import { startRenderer } from './helpers.ts';

/** Long, with a space and a character outside ASCII, as an operator's path may be. */
function assertOrdinaryLongPath(dir: string, min = LONG_DATA_DIR_MIN): void {
  assert.ok(dir.length > min, `${dir.length} characters: ${dir}`);
  assert.match(dir, / /);
  assert.ok(
    [...dir].some((c) => c.charCodeAt(0) > 127),
    `no non-ASCII character in ${dir}`,
  );
}

describe('any data directory', () => {
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/': page('<h1>long paths</h1>') });
  });
  after(async () => {
    await site?.close();
  });

  it('the harness starts apps, nodes and renderers on data directories over 120 characters', async () => {
    const app = await startApp({ db: 'sqlite' });
    try {
      assertOrdinaryLongPath(app.dataDir);
    } finally {
      await app.close();
    }
    const renderer = await startRenderer({ concurrency: 1 });
    try {
      assertOrdinaryLongPath(renderer.dataDir);
    } finally {
      await renderer.close();
    }
    const node = await startNode('harness', {}, { ready: false });
    try {
      assertOrdinaryLongPath(node.dataDir);
    } finally {
      await node.stop();
    }
    const dir = await longDataDir('harness');
    assertOrdinaryLongPath(dir);
    await removeDataDir(dir);
  });

  it('captures with a DATA_DIR of more than 200 characters', async () => {
    const t = await startApp({
      db: 'sqlite',
      dataDirLength: 200,
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '1' },
    });
    try {
      assertOrdinaryLongPath(t.dataDir, 200);
      const key = await newApiKey(t);
      const res = await t.fetch('/v1/screenshots', {
        method: 'POST',
        json: { url: `${site.origin}/` },
        headers: { 'x-api-key': key },
      });
      assert.equal(res.status, 201, await res.clone().text());
      const ready = await t.fetch('/readyz');
      assert.equal(ready.status, 200);
    } finally {
      await t.close();
    }
  });

  it('a node with a 250-character DATA_DIR and a long TMPDIR captures', async () => {
    // os.tmpdir() itself too long for Chromium's sockets: the browser's temp dir goes to /tmp.
    const longTmp = await longDataDir('tmp', 150);
    const node = await startNode(
      'long-paths',
      { EGRESS_ALLOWLIST: site.hostPort, TMPDIR: longTmp },
      { dataDirLength: 250 },
    );
    try {
      assertOrdinaryLongPath(node.dataDir, 250);
      const res = await node.fetch('/demo/screenshot', {
        method: 'POST',
        json: { url: `${site.origin}/` },
      });
      assert.equal(res.status, 201, `${await res.clone().text()}\n${node.output()}`);
    } finally {
      await node.stop();
      await removeDataDir(longTmp);
    }
  });
});
