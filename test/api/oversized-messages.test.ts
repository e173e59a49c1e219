/**
 * A page that makes Chromium send a protocol message over the bound (docs/security.md,
 * "Hostile pages"): the message is dropped undecoded, the browser replaced, and the capture,
 * with every other capture in flight on that browser, answers 503 `overloaded` with
 * Retry-After and spends no quota; the service stays up and the next capture is 201.
 *
 * The message is a console message: puppeteer keeps the Runtime domain on for every page, so
 * `console.log` of a long string arrives whole, whatever the page's own built-ins do. The
 * bound is lowered through CDP_MAX_MESSAGE_MB (what an operator may set too) so that the page
 * needs 24 MiB, not the half gigabyte that ended the process before the transport counted
 * bytes (puppeteer's pipe transport decoded any message into one string).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createKey, signUp, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

const BOUND_MIB = 16;

/** A console message of 24 Mi characters: over the bound, well within the page's memory. */
const HUGE_LOG = page(`<script>console.log('x'.repeat(24 << 20));</script><h1>logged</h1>`);

describe('a protocol message over the bound', () => {
  let t: TestApp;
  let site: FixtureSite;
  const hanging = new Set<ServerResponse>();
  let n = 0;

  before(async () => {
    site = await startSite({
      '/huge-log': HUGE_LOG,
      '/small': page('<h1>small</h1>'),
      // Never loads: its image is held until the test ends.
      '/slow': page('<img src="/hang.png">'),
      '/hang.png': (_req, res) => {
        hanging.add(res);
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: site.hostPort,
        CDP_MAX_MESSAGE_MB: String(BOUND_MIB),
        // The largest image must still fit the lowered bound (the config checks it).
        MAX_IMAGE_PIXELS: '2000000',
        RENDER_CONCURRENCY: '2',
      },
      plans: { free: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    await t?.close();
    await site?.close();
  });

  const newKey = async () => (await createKey(t, (await signUp(t)).cookie)).key;
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
  /** A capture that succeeds once the replacement browser is up (a 503 before that is fine). */
  const nextCapture = async (key: string): Promise<number> => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const res = await capture(key, '/small');
      if (res.status !== 503) return res.status;
      await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    return 503;
  };

  it('replaces the browser: 503 overloaded with Retry-After, no quota, service up', async () => {
    const key = await newKey();
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
    const res = await capture(key, '/huge-log');
    const body = (await res.json()) as { code: string; error: string };
    probing = false;
    await probes;
    assert.equal(res.status, 503, JSON.stringify(body));
    assert.equal(body.code, 'overloaded');
    assert.match(res.headers.get('retry-after') ?? '', /^[1-9][0-9]*$/);
    assert.equal(healthFailures, 0);
    assert.equal(await used(key), 0);
    assert.equal(await nextCapture(key), 201);
    assert.equal(await used(key), 1);
    assert.ok(
      t.logs.some((line) => line.includes(`more than ${BOUND_MIB * 2 ** 20} bytes`)),
      'the log names the bound',
    );
  });

  it('fails every other capture in flight on that browser with 503, never 500', async () => {
    const [slowKey, hostileKey] = [await newKey(), await newKey()];
    const seen = site.hits.get('/hang.png') ?? 0;
    const slow = capture(slowKey, '/slow');
    // The slow capture is on the browser (its page asked for the image) before the other one.
    const until = Date.now() + 20_000;
    while ((site.hits.get('/hang.png') ?? 0) === seen && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const hostile = await capture(hostileKey, '/huge-log');
    const other = await slow;
    for (const [name, res] of [
      ['hostile', hostile],
      ['in flight', other],
    ] as const) {
      const body = (await res.json()) as { code: string };
      assert.equal(res.status, 503, `${name}: ${JSON.stringify(body)}`);
      assert.equal(body.code, 'overloaded', name);
      assert.ok(res.headers.get('retry-after'), name);
    }
    assert.equal(await used(slowKey), 0);
    assert.equal(await used(hostileKey), 0);
    assert.equal(await nextCapture(slowKey), 201);
  });
});
