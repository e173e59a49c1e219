/**
 * The dashboard's changes are limited (docs/api.md, "Dashboard reads"): every change of the
 * account's own settings by session cookie (keys, secrets, checkout and portal, an image
 * deleted) draws on one window per account, `rates.sessionChangesPerMinute` a minute, apart
 * from the dashboard's reads and from the keys' windows. Past it: 429 with Retry-After and the
 * rate body, and nothing changed, on both databases (whose counters differ without Redis).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { account } from '../helpers/accounts.ts';
import { createKey, describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';

const LIMIT = BOUNDS.rates.sessionChangesPerMinute;

/** The changes this window covers, as the API document names them. */
const CHANGES = [
  ['post', '/v1/keys'],
  ['delete', '/v1/keys/{id}'],
  ['post', '/v1/keys/{id}/signing-secret'],
  ['post', '/v1/webhooks/secret/rotate'],
  ['post', '/v1/billing/checkout'],
  ['post', '/v1/billing/portal'],
  ['delete', '/v1/account/screenshots/{id}'],
] as const;

it('the API document gives each dashboard change its 429', () => {
  const doc = JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8'),
  ) as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
  for (const [method, p] of CHANGES) {
    assert.ok(doc.paths[p]?.[method]?.responses['429'], `${method.toUpperCase()} ${p}: 429`);
  }
});

describeEachDatabase('dashboard changes are limited per account', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(async () => {
    await t?.close();
  });

  /** Each change once, with ids of this account's (or none: a 404 still counts). */
  const change = (cookie: string, method: string, p: string) =>
    t.fetch(p.replace('{id}', '999999'), { method: method.toUpperCase(), cookie, json: {} });

  it('past the window every change is 429 and changes nothing; reads, keys and others go on', async () => {
    const a = await account(t, { key: true });
    const other = await signUp(t);
    // The window spent on a change that is cheap to repeat: rotating the webhook secret. The
    // account's key, made through the dashboard, was the window's first change.
    let secret = '';
    for (let remaining = LIMIT - 1; remaining > 0; remaining--) {
      const res = await t.fetch('/v1/webhooks/secret/rotate', { method: 'POST', cookie: a.cookie });
      assert.equal(res.status, 200, `${remaining} left: ${await res.clone().text()}`);
      assert.equal(res.headers.get('x-ratelimit-limit'), String(LIMIT));
      assert.equal(res.headers.get('x-ratelimit-remaining'), String(remaining - 1));
      secret = ((await res.json()) as { secret: string }).secret;
    }
    for (const [method, p] of CHANGES) {
      const res = await change(a.cookie, method, p);
      assert.equal(res.status, 429, `${method.toUpperCase()} ${p}`);
      const retryAfter = Number(res.headers.get('retry-after'));
      assert.ok(retryAfter >= 1 && retryAfter <= 60, `${p}: Retry-After ${retryAfter}`);
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.error, 'rate limit exceeded', p);
      assert.equal(body.limit, LIMIT, p);
      assert.equal(body.remaining, 0, p);
    }
    // Refused before it ran: the secret is the last one rotated, and no key was made.
    const read = await t.fetch('/v1/webhooks/secret', { cookie: a.cookie });
    assert.equal(read.status, 200, 'the reads have a window of their own');
    assert.equal(((await read.json()) as { secret: string }).secret, secret);
    const keys = (await (await t.fetch('/v1/keys', { cookie: a.cookie })).json()) as {
      data: unknown[];
    };
    assert.equal(keys.data.length, 1);
    // The account's key still works, and another account's dashboard changes go on.
    const usage = await t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    assert.equal(usage.status, 200);
    assert.match((await createKey(t, other.cookie)).key, /^sk_/);
  });

  it("a program spending its keys' window does not keep its owner from revoking the key", async () => {
    const a = await account(t, { key: true });
    for (let spent = 0; spent < BOUNDS.rates.otherEndpointsPerMinute; spent += 20) {
      const batch = Math.min(20, BOUNDS.rates.otherEndpointsPerMinute - spent);
      const answers = await Promise.all(
        Array.from({ length: batch }, () =>
          t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } }),
        ),
      );
      for (const res of answers) {
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
    }
    const spentKey = await t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    assert.equal(spentKey.status, 429, "the keys' window is spent");
    const keys = (await (await t.fetch('/v1/keys', { cookie: a.cookie })).json()) as {
      data: Array<{ id: number }>;
    };
    const revoke = await t.fetch(`/v1/keys/${keys.data[0]?.id}`, {
      method: 'DELETE',
      cookie: a.cookie,
    });
    assert.equal(revoke.status, 200, await revoke.clone().text());
    // Its second change: the key was made through the dashboard too.
    assert.equal(revoke.headers.get('x-ratelimit-remaining'), String(LIMIT - 2));
    const after = await t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    assert.equal(after.status, 401, 'the key is revoked');
  });
});
