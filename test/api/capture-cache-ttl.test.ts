/**
 * cache_ttl through the HTTP surface: how old a cached result a request accepts (0: none, and
 * at most a day), each value its own cache entry, `fresh` still rendering anew.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep } from '../helpers/fixtures.ts';

describe('capture API: cache_ttl', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;

  before(async () => {
    ({ t, site } = await startCaptureSite({ '/': page('<p>ttl</p>') }));
    key = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  let n = 0;
  const capture = async (body: Record<string, unknown>) => {
    const res = await postCapture(t, key, body);
    const text = await res.text();
    return { status: res.status, body: JSON.parse(text) as { cached?: boolean; error?: string } };
  };

  it('serves a result only while it is younger than cache_ttl', async () => {
    const url = `${site.origin}/?n=${++n}`;
    assert.equal((await capture({ url, cache_ttl: 1 })).body.cached, false);
    assert.equal((await capture({ url, cache_ttl: 1 })).body.cached, true);
    await sleep(1_200);
    assert.equal((await capture({ url, cache_ttl: 1 })).body.cached, false);
  });

  it('0 never serves from the cache', async () => {
    const url = `${site.origin}/?n=${++n}`;
    for (let i = 0; i < 2; i++) {
      const { status, body } = await capture({ url, cache_ttl: 0 });
      assert.equal(status, 201);
      assert.equal(body.cached, false);
    }
  });

  it('keeps one entry per value, the default being 900 seconds', async () => {
    const url = `${site.origin}/?n=${++n}`;
    assert.equal((await capture({ url })).body.cached, false);
    assert.equal((await capture({ url, cache_ttl: 900 })).body.cached, true);
    assert.equal((await capture({ url, cache_ttl: 3_600 })).body.cached, false);
    assert.equal((await capture({ url, cache_ttl: 3_600 })).body.cached, true);
  });

  it('refuses values out of range with a 400 naming the field', async () => {
    const url = `${site.origin}/?n=${++n}`;
    for (const [value, message] of [
      [86_401, 'cache_ttl must be <= 86400'],
      [-1, 'cache_ttl must be >= 0'],
      [1.5, 'cache_ttl must be an integer'],
    ] as const) {
      const { status, body } = await capture({ url, cache_ttl: value });
      assert.equal(status, 400);
      assert.equal(body.error, message);
    }
  });
});
