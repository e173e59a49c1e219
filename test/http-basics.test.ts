import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachDatabase, signUp, startApp, type TestApp } from './helpers/app.ts';

describeEachDatabase('HTTP surface basics', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('sets X-Request-Id on every response, honouring a well-formed incoming one', async () => {
    for (const p of ['/healthz', '/nope', '/v1/auth/me']) {
      const res = await t.fetch(p);
      assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, p);
    }
    const own = await t.fetch('/healthz', { headers: { 'x-request-id': 'trace-123' } });
    assert.equal(own.headers.get('x-request-id'), 'trace-123');
    const hostile = await t.fetch('/healthz', { headers: { 'x-request-id': 'a b<script>' } });
    assert.notEqual(hostile.headers.get('x-request-id'), 'a b<script>');
  });

  it('answers unknown routes with JSON 404 and wrong methods with JSON 405 and Allow', async () => {
    const nf = await t.fetch('/v1/nothing-here');
    assert.equal(nf.status, 404);
    assert.match(nf.headers.get('content-type') ?? '', /application\/json/);
    assert.equal(typeof ((await nf.json()) as { error: string }).error, 'string');
    const wrong = await t.fetch('/v1/keys', { method: 'PUT' });
    assert.equal(wrong.status, 405);
    assert.match(wrong.headers.get('allow') ?? '', /GET/);
    assert.match(wrong.headers.get('allow') ?? '', /POST/);
    assert.equal(typeof ((await wrong.json()) as { error: string }).error, 'string');
    const param = await t.fetch('/v1/keys/12', { method: 'GET' });
    assert.equal(param.status, 405);
  });

  it('answers malformed JSON with 400 and a body over 64 KiB with 413', async () => {
    const bad = await t.fetch('/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email": ',
    });
    assert.equal(bad.status, 400);
    assert.deepEqual(await bad.json(), {
      error: 'body is not valid JSON',
      code: 'invalid_request',
    });
    const big = await t.fetch('/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.co', password: 'x'.repeat(70 * 1024) }),
    });
    assert.equal(big.status, 413);
    assert.deepEqual(await big.json(), { error: 'request body is larger than 64 KiB' });
    const poisoned = await t.fetch('/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"__proto__": {"admin": true}, "email": "a@b.co", "password": "xxxxxxxxxx"}',
    });
    assert.equal(poisoned.status, 400);
    const form = await t.fetch('/v1/auth/login', {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.equal(form.status, 400);
    assert.deepEqual(await form.json(), {
      error: 'body must be JSON (Content-Type: application/json)',
      code: 'invalid_request',
    });
  });

  it('readyz reports the database, healthz answers while alive', async () => {
    assert.equal((await t.fetch('/healthz')).status, 200);
    const ready = await t.fetch('/readyz');
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { checks: Record<string, string> };
    assert.equal(body.checks.database, 'ok');
  });

  it('serves the OpenAPI document and the docs page without a CDN', async () => {
    const doc = await t.fetch('/v1/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(((await doc.json()) as { openapi: string }).openapi, '3.1.0');
    const docs = await t.fetch('/docs/api/');
    assert.equal(docs.status, 200);
    const html = await docs.text();
    assert.match(html, /swagger/i);
    assert.doesNotMatch(html, /https?:\/\/(cdn|unpkg|cdnjs|jsdelivr)/i);
  });

  it('never sends a stack trace out', async () => {
    const { cookie } = await signUp(t);
    const res = await t.fetch('/v1/keys/abc', { method: 'DELETE', cookie });
    const text = await res.text();
    assert.doesNotMatch(text, /at .*\.ts:\d+/);
  });
});
