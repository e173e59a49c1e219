/**
 * The idle shrink (docs/deployment.md, "Memory"): after a while without a capture the pool
 * keeps one page, closing the others with their contexts; captures afterwards, for a returning
 * client and for a new one, still succeed, and the pool grows back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { isAppError } from '../../src/domain/errors.ts';
import { type FixtureSite, imageSize, page, startSite } from '../helpers/fixtures.ts';
import { rendererPids, renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

const IDLE_MS = 1_000;

describe('idle shrink', () => {
  let site: FixtureSite;
  let r: TestRenderer;
  const lines: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const record = (fields: object, msg: string) => {
    lines.push({ msg, fields: fields as Record<string, unknown> });
  };

  before(async () => {
    site = await startSite({ '/': page('<h1 style="color:red">idle</h1>') });
    r = await startRenderer({
      concurrency: 2,
      idleShrinkMs: IDLE_MS,
      logger: { debug: record, info: record, warn: record, error: record },
    });
  });
  after(async () => {
    await r?.close();
    await site?.close();
  });

  let n = 0;
  /** A capture for `client`; a 503 (a busy machine can make Chromium slow to give pages) is retried. */
  const capture = async (client: string) => {
    const end = Date.now() + 120_000;
    for (;;) {
      try {
        return await r.renderer.render(renderOptions({ url: `${site.origin}/?n=${++n}` }), {
          deadline: Date.now() + 30_000,
          client: { id: client, maxConcurrent: 2 },
        });
      } catch (err) {
        if (!(isAppError(err) && err.code === 'overloaded') || Date.now() > end) throw err;
        await sleep(500);
      }
    }
  };

  it('keeps one page when idle, then captures for old and new clients', async () => {
    // Three clients at two slots: the pool grows to its four pages (two per slot).
    for (let round = 0; round < 2; round++) {
      await Promise.all(['a', 'b', 'c'].map((client) => capture(client)));
    }
    const shrunk = async () => {
      const end = Date.now() + 60_000;
      for (;;) {
        const line = lines.find(
          (l) => l.msg === 'idle: pool shrunk' && Number(l.fields.closed) > 0,
        );
        if (line) return line;
        assert.ok(Date.now() < end, `no shrink logged: ${JSON.stringify(lines.slice(-10))}`);
        await sleep(100);
      }
    };
    const line = await shrunk();
    assert.equal(Number(line.fields.pages), 1, `pages after the shrink: ${line.fields.pages}`);
    assert.equal(r.renderer.pages, 1);
    const renderersAfter = rendererPids(r.dataDir).length;
    // The kept page's renderer and the launch's own blank tab (one more for slack).
    assert.ok(renderersAfter <= 3, `renderer processes after the shrink: ${renderersAfter}`);

    for (const client of ['c', 'a', 'new-client']) {
      const result = await capture(client);
      assert.deepEqual(
        { ...imageSize(result.image), format: result.format },
        { format: 'png', width: 400, height: 300 },
      );
    }
    // Busy again: the pool is back to at least a page per slot.
    assert.ok(r.renderer.pages >= 2, `pages after new captures: ${r.renderer.pages}`);
  });
});
