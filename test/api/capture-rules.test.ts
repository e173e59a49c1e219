import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { generateApiKey } from '../../src/domain/api-key-format.ts';
import { account, type KeyedAccount } from '../helpers/accounts.ts';
import { createKey, describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';

/** Rules observable without a render: authentication, validation, plan rules, rate limits. */
describeEachDatabase('capture request rules', (db) => {
  let t: TestApp;
  let free: KeyedAccount;
  let pro: KeyedAccount;

  before(async () => {
    t = await startApp({
      db,
      plans: { free: { rate_per_minute: 1000 }, pro: { rate_per_minute: 1000 } },
    });
    free = await account(t, { key: true });
    pro = await account(t, { plan: 'pro', key: true });
  });
  after(() => t.close());

  const capture = (key: string | undefined, json: unknown) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      json,
      headers: key === undefined ? {} : { 'x-api-key': key },
    });

  it('refuses a missing, malformed or unknown key with exactly {"error":"unauthorized"}', async () => {
    for (const key of [undefined, '', 'sk_live_short', `${free.key}x`, generateApiKey().key]) {
      const res = await capture(key, { url: 'https://example.com' });
      assert.equal(res.status, 401, String(key));
      assert.equal(await res.text(), '{"error":"unauthorized"}');
    }
  });

  it('refuses a malformed key without a database read', async () => {
    const before = t.deps.database.queryCount();
    const bad = `${free.key.slice(0, -1)}${free.key.endsWith('A') ? 'B' : 'A'}`;
    for (let i = 0; i < 5; i++)
      assert.equal((await capture(bad, { url: 'https://example.com' })).status, 401);
    assert.equal(t.deps.database.queryCount(), before);
  });

  it('refuses a revoked key on the very next request', async () => {
    const k = await createKey(t, free.cookie);
    assert.equal((await t.fetch('/v1/usage', { headers: { 'x-api-key': k.key } })).status, 200);
    await t.fetch(`/v1/keys/${k.id}`, { method: 'DELETE', cookie: free.cookie });
    const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': k.key } });
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'unauthorized' });
  });

  it('answers each malformed field with a 400 naming it', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{}, /one of url, html or markdown is required/],
      [{ url: 'https://example.com', fullpage: true }, /unknown field "fullpage"/],
      [{ url: 'https://example.com', width: '1920' }, /width must be an integer/],
      [{ url: 'https://example.com', width: 0 }, /width must be >= 1/],
      [{ url: 'https://example.com', height: 1.5 }, /height must be an integer/],
      [{ url: 'https://example.com', full_page: 'true' }, /full_page must be a boolean/],
      [{ url: 'https://example.com', quality: 101 }, /quality must be <= 100/],
      [{ url: 'https://example.com', quality: 0 }, /quality must be >= 1/],
      [{ url: 'https://example.com', format: 'gif' }, /format must be one of png, jpeg, webp/],
      [{ url: 'https://example.com', device_scale_factor: 4 }, /device_scale_factor must be <= 3/],
      [{ url: 'https://example.com', delay: 10_001 }, /delay must be <= 10000/],
      [{ url: 'https://example.com', wait_until: 'forever' }, /wait_until must be one of/],
      [{ url: 'https://example.com', hide_selectors: 'nav' }, /hide_selectors must be an array/],
      [{ url: 42 }, /url must be a string/],
      [{ url: 'not a url' }, /url/],
      [{ url: `https://example.com/${'a'.repeat(2100)}` }, /url must be at most 2048 characters/],
      [[1, 2], /body must be an object/],
    ];
    for (const [json, pattern] of cases) {
      const res = await capture(free.key, json);
      assert.equal(res.status, 400, JSON.stringify(json).slice(0, 80));
      const body = (await res.json()) as { error: string; code: string };
      assert.match(body.error, pattern);
      assert.equal(body.code, 'invalid_request');
    }
  });

  it('refuses schemes other than http(s), credentials and private targets as url_not_allowed', async () => {
    for (const url of [
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,hi',
      'ftp://example.com/x',
      'chrome://settings',
      'view-source:https://example.com',
      'ws://example.com',
      'https://user:pass@example.com/',
      'http://127.0.0.1/',
      'http://localhost:8080/',
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/',
      'http://0x7f000001/',
      'http://2130706433/',
      'http://[::ffff:127.0.0.1]/',
      'http://100.64.0.1/',
      'http://[fc00::1]/',
    ]) {
      const res = await capture(free.key, { url });
      assert.equal(res.status, 400, url);
      const body = (await res.json()) as { code: string; error: string };
      assert.equal(body.code, 'url_not_allowed', `${url}: ${body.error}`);
    }
    // Nothing above spent quota.
    const usage = (await (
      await t.fetch('/v1/usage', { headers: { 'x-api-key': free.key } })
    ).json()) as {
      used: number;
    };
    assert.equal(usage.used, 0);
  });

  it('applies the plan table: Free refuses webp, fresh, scale and says so', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ format: 'webp' }, /webp is not available on the free plan/],
      [{ fresh: true }, /fresh is not available on the free plan/],
      [{ device_scale_factor: 2 }, /device_scale_factor.*free plan/],
      [{ device_scale_factor: 1.5 }, /device_scale_factor.*free plan/],
    ];
    for (const [extra, pattern] of cases) {
      const res = await capture(free.key, { url: 'https://example.com', ...extra });
      assert.equal(res.status, 400, JSON.stringify(extra));
      const body = (await res.json()) as { error: string; code: string };
      assert.match(body.error, pattern);
      assert.equal(body.code, 'plan_restriction');
    }
    const jpegTransparent = await capture(pro.key, {
      url: 'https://example.com',
      format: 'jpeg',
      omit_background: true,
    });
    assert.equal(jpegTransparent.status, 400);
  });

  it('sets X-RateLimit headers on capture answers, including errors', async () => {
    const res = await capture(free.key, {});
    assert.equal(res.status, 400);
    assert.equal(res.headers.get('x-ratelimit-limit'), '1000');
    assert.ok(Number(res.headers.get('x-ratelimit-remaining')) < 1000);
    assert.ok(Number(res.headers.get('x-ratelimit-reset')) > Date.now() / 1000);
  });
});

describeEachDatabase('per-minute rate limit', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('accepts exactly `rate` of rate + 10 simultaneous requests, per account across keys', async () => {
    const { cookie } = await signUp(t);
    const a = await createKey(t, cookie);
    const b = await createKey(t, cookie);
    const rate = 5; // Free
    // Invalid bodies draw on the rate like any authenticated capture request, without rendering.
    const results = await Promise.all(
      Array.from({ length: rate + 10 }, (_, i) =>
        t.fetch('/v1/screenshots', {
          method: 'POST',
          json: {},
          headers: { 'x-api-key': i % 2 ? a.key : b.key },
        }),
      ),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 400).length, rate);
    assert.equal(statuses.filter((s) => s === 429).length, 10);
    const limited = results.find((r) => r.status === 429);
    assert.ok(limited);
    const body = (await limited.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), [
      'error',
      'limit',
      'message',
      'plan',
      'remaining',
      'reset_time',
      'success',
      'used',
    ]);
    assert.equal(body.error, 'rate limit exceeded');
    assert.equal(body.success, false);
    assert.equal(body.limit, rate);
    assert.equal(body.used, rate);
    assert.equal(body.remaining, 0);
    assert.equal(body.plan, 'free');
    assert.equal(typeof body.message, 'string');
    const now = Date.now() / 1000;
    assert.ok(
      (body.reset_time as number) > now && (body.reset_time as number) <= now + 61,
      String(body.reset_time),
    );
    const retry = Number(limited.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60);
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    // Usage is not a capture: it still answers, and reports the spent rate.
    const usage = await t.fetch('/v1/usage', { headers: { 'x-api-key': a.key } });
    assert.equal(usage.status, 200);
    const u = (await usage.json()) as { rate_limit: { limit: number; remaining: number } };
    assert.deepEqual([u.rate_limit.limit, u.rate_limit.remaining], [5, 0]);
  });

  it('applies a plan change on the very next request', async () => {
    const u = await account(t, { key: true });
    const webp = () =>
      t.fetch('/v1/screenshots', {
        method: 'POST',
        json: { url: 'http://10.0.0.1/', format: 'webp' },
        headers: { 'x-api-key': u.key },
      });
    const first = await webp();
    assert.equal(((await first.json()) as { code: string }).code, 'plan_restriction');
    await t.deps.ctx.store.users.setPlan(u.id, 'pro', Date.now());
    const second = await webp();
    // Past the plan check now (the private URL is what refuses it), with Pro's rate.
    assert.equal(((await second.json()) as { code: string }).code, 'url_not_allowed');
    assert.equal(second.headers.get('x-ratelimit-limit'), '60');
    const usage = (await (
      await t.fetch('/v1/usage', { headers: { 'x-api-key': u.key } })
    ).json()) as {
      plan: string;
      limit: number;
    };
    assert.deepEqual([usage.plan, usage.limit], ['pro', 5000]);
  });
});
