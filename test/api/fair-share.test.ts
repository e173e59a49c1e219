/**
 * Fair share of the render pool (docs/security.md): on a 2-slot node, a Free account
 * (concurrent_renders 1) with five captures of a page that never finishes loading does not
 * hold both slots, and another account's capture of a fast page is served within about one
 * render, far inside the render timeout. The Free account's extra captures wait for its
 * first one within their own deadline, and end as render_timeout like any capture that runs
 * out of time.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';

const RENDER_TIMEOUT_MS = 20_000;

describe('fair share of the render pool', () => {
  let t: TestApp;
  let site: FixtureSite;
  const held = new Set<ServerResponse>();

  before(async () => {
    site = await startSite({
      '/fast': page('<h1>fast</h1>'),
      // Sends its head, then never the rest: the page never finishes loading.
      '/never': (_req, res) => {
        held.add(res);
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<!doctype html><html><body><p>still loading');
        res.on('close', () => held.delete(res));
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: site.hostPort,
        RENDER_CONCURRENCY: '2',
        RENDER_TIMEOUT_MS: String(RENDER_TIMEOUT_MS),
      },
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, url: string) =>
    t.fetch('/v1/screenshots', { method: 'POST', json: { url }, headers: { 'x-api-key': key } });

  it("one account's never-ending captures do not hold back another account's capture", async () => {
    const hog = await newApiKey(t);
    const other = await newApiKey(t);
    const hogCaptures = [1, 2, 3, 4, 5].map((i) =>
      capture(hog, `${site.origin}/never?i=${i}`).then(async (res) => ({
        status: res.status,
        body: (await res.json()) as { code?: string },
      })),
    );
    // All five are in: at least one renders, the others wait for a slot.
    for (let i = 0; i < 200; i++) {
      const stats = t.deps.renderer.stats();
      if ((site.hits.get('/never') ?? 0) >= 1 && stats.inUse + stats.queued >= 5) break;
      await sleep(50);
    }
    const stats = t.deps.renderer.stats();
    assert.ok(stats.inUse + stats.queued >= 5, `five captures in: ${JSON.stringify(stats)}`);
    await sleep(500);

    const started = Date.now();
    const res = await capture(other, `${site.origin}/fast`);
    const took = Date.now() - started;
    console.log(`the other account's capture took ${took} ms`);
    assert.equal(res.status, 201, await res.clone().text());
    // The failure mode waits for the hog's captures to time out: the whole render timeout.
    assert.ok(took < RENDER_TIMEOUT_MS / 2, `took ${took} ms`);
    // concurrent_renders 1: the hog's second capture never started while its first ran.
    assert.equal(site.hits.get('/never'), 1);

    // Its captures still end within their deadline, as render_timeout (504), not overloaded.
    const outcomes = await Promise.all(hogCaptures);
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 504, JSON.stringify(outcome));
      assert.equal(outcome.body.code, 'render_timeout');
    }
  });
});
