/**
 * The dashboard's reads are limited (docs/api.md, "Dashboard reads"): every GET by session
 * cookie in the API document draws on one window per account, `rates.otherEndpointsPerMinute`
 * reads a minute, as many as its keys' reads get but apart from them, so a program spending
 * its keys' window does not lock the dashboard out, nor the dashboard the program. Past it:
 * 429 with Retry-After and the rate body, on both databases (whose counters differ when
 * there is no Redis). How few reads the dashboard's own pages make is test/e2e/dashboard.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { account } from '../helpers/accounts.ts';
import { describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';

type Json = Record<string, unknown>;
const LIMIT = BOUNDS.rates.otherEndpointsPerMinute;

interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, unknown>;
}
const doc = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8'),
) as { paths: Record<string, Record<string, Operation>> };

/** Every GET the document says takes the session cookie, its path parameters filled in. */
const SESSION_READS = Object.entries(doc.paths).flatMap(([p, ops]) => {
  const op = ops.get;
  if (!op?.security?.some((s) => 'session' in s)) return [];
  return [{ path: p.replace(/\{[^}]+\}/g, 'x'), documented: p, op }];
});

/** `n` requests, a few at a time (the machine is shared), each expected to answer `status`. */
async function burst(n: number, request: () => Promise<Response>, status: number) {
  for (let done = 0; done < n; ) {
    const batch = Math.min(20, n - done);
    const answers = await Promise.all(Array.from({ length: batch }, request));
    for (const res of answers) {
      assert.equal(res.status, status, await res.clone().text());
      await res.body?.cancel();
    }
    done += batch;
  }
}

it('the API document has the dashboard reads this test walks, each with its 429', () => {
  const paths = SESSION_READS.map((r) => r.documented);
  for (const p of [
    '/v1/auth/me',
    '/v1/keys',
    '/v1/account/usage',
    '/v1/account/screenshots',
    '/v1/account/monitors',
    '/v1/account/monitors/{id}/runs',
    '/v1/webhooks/deliveries',
    '/v1/billing/subscription',
  ]) {
    assert.ok(paths.includes(p), p);
  }
  for (const read of SESSION_READS) assert.ok(read.op.responses['429'], `${read.documented}: 429`);
});

describeEachDatabase('dashboard reads are limited per account', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(async () => {
    await t?.close();
  });

  const read = (cookie: string, p: string) => t.fetch(p, { cookie });

  it("past the window every session read is 429 with Retry-After; others' reads go on", async () => {
    const a = await account(t, { key: true });
    const other = await signUp(t);
    // Each read once: it counts, and says so.
    for (const { path: p } of SESSION_READS) {
      const res = await read(a.cookie, p);
      assert.notEqual(res.status, 429, p);
      assert.equal(res.headers.get('x-ratelimit-limit'), String(LIMIT), p);
      await res.body?.cancel();
    }
    const first = await read(a.cookie, '/v1/auth/me');
    assert.equal(
      Number(first.headers.get('x-ratelimit-remaining')),
      LIMIT - SESSION_READS.length - 1,
      'one window for every read',
    );
    // The rest of the window, in a burst.
    const left = Number(first.headers.get('x-ratelimit-remaining'));
    await burst(left, () => read(a.cookie, '/v1/auth/me'), 200);

    for (const { path: p } of SESSION_READS) {
      const res = await read(a.cookie, p);
      assert.equal(res.status, 429, p);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `${p}: Retry-After ${retryAfter}`);
      const body = (await res.json()) as Json;
      assert.equal(body.error, 'rate limit exceeded', p);
      assert.equal(body.limit, LIMIT, p);
      assert.equal(body.remaining, 0, p);
      assert.equal(res.headers.get('x-ratelimit-remaining'), '0', p);
    }
    // Another account's dashboard, and this account's own keys, have windows of their own.
    assert.equal((await read(other.cookie, '/v1/auth/me')).status, 200);
    const byKey = await t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    assert.equal(byKey.status, 200, await byKey.clone().text());
  });

  it("a program spending its keys' reads does not lock the dashboard out", async () => {
    const a = await account(t, { key: true });
    const byKey = () => t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    await burst(LIMIT, byKey, 200);
    assert.equal((await byKey()).status, 429, "the keys' window is spent");
    const keys = await read(a.cookie, '/v1/keys');
    assert.equal(keys.status, 200, 'the keys page still loads, to revoke the key');
    assert.equal(keys.headers.get('x-ratelimit-remaining'), String(LIMIT - 1));
  });
});
