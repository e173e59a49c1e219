/**
 * A page that makes Chromium send a protocol event over the bound (docs/security.md, "Hostile
 * pages"): the event is skipped, read and dropped to its end, and nothing else notices. Two
 * tenants capturing slow pages on the same browser while a third tenant's page logs 40 MB all
 * get their 201s; the browser is not replaced; the service answers health checks throughout.
 *
 * The message is a console message: puppeteer keeps the Runtime domain on for every page, so
 * `console.log` of a long string arrives whole, whatever the page's own built-ins do. 40 MiB is
 * over the events' bound (32 MiB) at the default settings, which this test keeps.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

/** A console message of 40 Mi characters, logged as soon as the page runs. */
const HUGE_LOG = page(
  `<h1>logged</h1><script>setTimeout(() => console.log('x'.repeat(40 << 20)), 0);</script>`,
);
const SLOW_MS = 4000;

describe('a protocol event over the bound', () => {
  let t: TestApp;
  let site: FixtureSite;
  let n = 0;

  before(async () => {
    site = await startSite({
      '/huge-log': HUGE_LOG,
      // Answers after SLOW_MS: its capture is on the browser when the log comes.
      '/slow': (_req, res) => {
        setTimeout(() => {
          res.setHeader('content-type', 'text/html');
          res.end('<h1 style="color:green">slow but fine</h1>');
        }, SLOW_MS);
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '3' },
      plans: { free: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, path: string) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${site.origin}${path}?n=${++n}`, width: 400, height: 300 },
    });
  const used = async (key: string) =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  it('is skipped: two tenants in flight and the sender all get 201, the browser stays', async () => {
    const [first, second, hostile] = [await newApiKey(t), await newApiKey(t), await newApiKey(t)];
    let healthFailures = 0;
    let probing = true;
    const probes = (async () => {
      while (probing) {
        const res = await t.fetch('/healthz').catch(() => null);
        if (res?.status !== 200) healthFailures++;
        await res?.body?.cancel();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const slow = [capture(first, '/slow'), capture(second, '/slow')];
    // Both slow pages are asked for (their captures are on the browser) before the log.
    const until = Date.now() + 20_000;
    while ((site.hits.get('/slow') ?? 0) < 2 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 800));
    const results = await Promise.all([capture(hostile, '/huge-log'), ...slow]);
    probing = false;
    await probes;
    for (const [name, res] of [
      ['sender', results[0]],
      ['first tenant', results[1]],
      ['second tenant', results[2]],
    ] as const) {
      const body = await res?.text();
      assert.equal(res?.status, 201, `${name}: ${body}`);
    }
    assert.equal(healthFailures, 0);
    // Each capture was a capture: charged as one.
    assert.deepEqual([await used(first), await used(second), await used(hostile)], [1, 1, 1]);
    assert.ok(
      t.logs.some((line) => line.includes('dropped a protocol message over the bound')),
      'the log says what was dropped',
    );
    assert.ok(!t.logs.some((line) => line.includes('replacing it')), 'no browser was replaced');
  });
});
