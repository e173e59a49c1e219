import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from './helpers/accounts.ts';
import { startApp, type TestApp } from './helpers/app.ts';

describe('metrics', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db: 'sqlite', plans: { free: { rate_per_minute: 2 } } });
  });
  after(() => t.close());

  const value = (text: string, pattern: RegExp): number => {
    const line = text.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('counts requests by route and status, and refusals by reason', async () => {
    const key = await newApiKey(t);
    const capture = (json: unknown) =>
      t.fetch('/v1/screenshots', { method: 'POST', json, headers: { 'x-api-key': key } });
    assert.equal((await capture({ url: 'http://169.254.169.254/' })).status, 400);
    assert.equal((await capture({})).status, 400);
    assert.equal((await capture({})).status, 429);
    assert.equal((await t.fetch('/v1/screenshots', { method: 'POST', json: {} })).status, 401);

    const res = await t.fetch('/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    const text = await res.text();
    assert.equal(
      value(
        text,
        /^shotsmith_http_requests_total\{route="\/v1\/screenshots",method="POST",status="400"\}/,
      ),
      2,
    );
    assert.equal(
      value(
        text,
        /^shotsmith_http_requests_total\{route="\/v1\/screenshots",method="POST",status="429"\}/,
      ),
      1,
    );
    assert.equal(
      value(
        text,
        /^shotsmith_http_requests_total\{route="\/v1\/screenshots",method="POST",status="401"\}/,
      ),
      1,
    );
    assert.equal(value(text, /^shotsmith_refusals_total\{reason="ssrf"\}/), 1);
    assert.equal(value(text, /^shotsmith_refusals_total\{reason="rate"\}/), 1);
    assert.match(text, /^shotsmith_browser_pool_in_use 0/m);
    assert.match(text, /^# TYPE shotsmith_capture_duration_seconds histogram/m);
  });
});

describe('who may read /metrics', () => {
  const TOKEN = 'metrics-token-0123456789abcdef';
  let open: TestApp;
  let locked: TestApp;
  before(async () => {
    // Both behind a trusted proxy on loopback, as with nginx on the same host.
    open = await startApp({ db: 'sqlite', env: { TRUST_PROXY: 'loopback' } });
    locked = await startApp({
      db: 'sqlite',
      env: { TRUST_PROXY: 'loopback', METRICS_TOKEN: TOKEN },
    });
  });
  after(async () => {
    await open?.close();
    await locked?.close();
  });

  const notFound = async (res: Response) => {
    assert.equal(res.status, 404);
    const body = (await res.json()) as { error: string };
    assert.equal(body.error, 'no route for GET /metrics');
    assert.equal(res.headers.get('content-type')?.includes('json'), true);
  };

  it('without METRICS_TOKEN: loopback clients only, not clients a proxy forwards', async () => {
    const own = await open.fetch('/metrics');
    assert.equal(own.status, 200);
    assert.match(await own.text(), /shotsmith_http_requests_total/);
    // A request the loopback proxy forwards for another client is that client's.
    await notFound(await open.fetch('/metrics', { headers: { 'x-forwarded-for': '203.0.113.7' } }));
    await notFound(
      await open.fetch('/metrics', { headers: { 'x-forwarded-for': '2001:db8::1, 198.51.100.2' } }),
    );
    // A client claiming loopback behind the proxy is still the proxy's client.
    await notFound(
      await open.fetch('/metrics', { headers: { 'x-forwarded-for': '127.0.0.1, 203.0.113.7' } }),
    );
  });

  it('with METRICS_TOKEN: only the bearer token, from anywhere, loopback included', async () => {
    await notFound(await locked.fetch('/metrics'));
    for (const authorization of [
      'Bearer wrong',
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${TOKEN}`,
      TOKEN,
      'Bearer ',
    ]) {
      await notFound(await locked.fetch('/metrics', { headers: { authorization } }));
    }
    const local = await locked.fetch('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(local.status, 200);
    assert.match(await local.text(), /shotsmith_http_requests_total/);
    const forwarded = await locked.fetch('/metrics', {
      headers: { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.7' },
    });
    assert.equal(forwarded.status, 200);
    await forwarded.body?.cancel();
  });
});
