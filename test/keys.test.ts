import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createKey, describeEachDatabase, signUp, startApp, type TestApp } from './helpers/app.ts';

describeEachDatabase('API keys', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('creates a key: 201, exact fields, plaintext once, no-store', async () => {
    const { cookie } = await signUp(t);
    const res = await t.fetch('/v1/keys', { method: 'POST', cookie, json: { name: 'production' } });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const body = (await res.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), [
      'created_at',
      'id',
      'key',
      'last_used_at',
      'name',
      'prefix',
      'signing_secret',
    ]);
    assert.match(String(body.key), /^sk_live_[0-9A-Za-z]{38}$/);
    assert.match(String(body.signing_secret), /^sig_live_[0-9A-Za-z]{43}$/);
    assert.equal(body.prefix, String(body.key).slice(0, 12));
    assert.equal(body.name, 'production');
    assert.equal(body.last_used_at, null);
    assert.ok(Number.isInteger(body.id) && (body.id as number) > 0);
  });

  it('accepts no body and an empty object', async () => {
    const { cookie } = await signUp(t);
    assert.equal((await t.fetch('/v1/keys', { method: 'POST', cookie })).status, 201);
    assert.equal((await t.fetch('/v1/keys', { method: 'POST', cookie, json: {} })).status, 201);
    const bad = await t.fetch('/v1/keys', { method: 'POST', cookie, json: { name: 5 } });
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /name/);
  });

  it('lists active keys newest first with prefix and metadata only', async () => {
    const { cookie } = await signUp(t);
    const a = await createKey(t, cookie, 'first');
    const b = await createKey(t, cookie, 'second');
    const res = await t.fetch('/v1/keys', { cookie });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.ok(!text.includes(a.key) && !text.includes(b.key), 'plaintext never listed');
    const body = JSON.parse(text) as { data: Array<Record<string, unknown>> };
    assert.deepEqual(
      body.data.map((k) => k.id),
      [b.id, a.id],
    );
    for (const item of body.data) {
      assert.deepEqual(Object.keys(item).sort(), [
        'created_at',
        'id',
        'last_used_at',
        'name',
        'prefix',
      ]);
    }
  });

  it('deletes a key: 200 body, then it is gone from the list', async () => {
    const { cookie } = await signUp(t);
    const k = await createKey(t, cookie);
    const res = await t.fetch(`/v1/keys/${k.id}`, { method: 'DELETE', cookie });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { success: boolean; message: string };
    assert.equal(body.success, true);
    assert.match(body.message, /deleted/);
    const list = (await (await t.fetch('/v1/keys', { cookie })).json()) as { data: unknown[] };
    assert.equal(list.data.length, 0);
    const again = await t.fetch(`/v1/keys/${k.id}`, { method: 'DELETE', cookie });
    assert.equal(again.status, 404);
    assert.deepEqual(await again.json(), { error: 'api key not found' });
  });

  it("gives 404 for another account's key id and leaves it working", async () => {
    const owner = await signUp(t);
    const other = await signUp(t);
    const k = await createKey(t, owner.cookie);
    const res = await t.fetch(`/v1/keys/${k.id}`, { method: 'DELETE', cookie: other.cookie });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'api key not found' });
    const list = (await (await t.fetch('/v1/keys', { cookie: owner.cookie })).json()) as {
      data: unknown[];
    };
    assert.equal(list.data.length, 1);
  });

  it('gives 400 invalid key id for malformed ids', async () => {
    const { cookie } = await signUp(t);
    for (const id of ['abc', '-1', '1.5', '0', '1e3', '%20']) {
      const res = await t.fetch(`/v1/keys/${id}`, { method: 'DELETE', cookie });
      assert.equal(res.status, 400, id);
      const body = (await res.json()) as { error: string };
      assert.equal(body.error, 'invalid key id');
    }
    const huge = await t.fetch('/v1/keys/99999999999999999999', { method: 'DELETE', cookie });
    assert.equal(huge.status, 404);
  });

  it('allows at most 20 active keys', async () => {
    const { cookie } = await signUp(t);
    const created = await Promise.all(Array.from({ length: 20 }, () => createKey(t, cookie)));
    const res = await t.fetch('/v1/keys', { method: 'POST', cookie, json: {} });
    assert.equal(res.status, 400);
    assert.equal(
      ((await res.json()) as { error: string }).error,
      'key limit reached (20 active keys)',
    );
    // Revoking one frees a slot.
    await t.fetch(`/v1/keys/${created[0]?.id}`, { method: 'DELETE', cookie });
    assert.equal((await t.fetch('/v1/keys', { method: 'POST', cookie, json: {} })).status, 201);
  });

  it('never writes key plaintext or session cookies into the logs', async () => {
    const { cookie } = await signUp(t);
    const k = await createKey(t, cookie);
    await t.fetch('/v1/keys', { cookie });
    const all = t.logs.join('\n');
    assert.ok(!all.includes(k.key), 'key plaintext logged');
    assert.ok(!all.includes(cookie.split('=')[1] ?? '!'), 'session token logged');
  });
});
