import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createKey, signUp, startApp, type TestApp } from './helpers/app.ts';

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
    const u = await signUp(t);
    const { key } = await createKey(t, u.cookie);
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
