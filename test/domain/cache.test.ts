/**
 * The result cache (docs/api.md, "The result cache"; "Order of checks": a hit still costs its
 * unit), through the real app on SQLite with the in-memory renderer: what renders, what is
 * served from the cache, for how long, and to whom.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { account } from '../helpers/accounts.ts';
import { capture, type DomainApp, startDomainApp, usage } from '../helpers/domain.ts';
import { imageSize } from '../helpers/fixtures.ts';

const MINUTE = 60_000;

describe('domain: the result cache', () => {
  let d: DomainApp;
  /** The app's clock runs this far ahead of the real one (a cache entry outlived). */
  let ahead = 0;
  before(async () => {
    d = await startDomainApp({
      clock: () => Date.now() + ahead,
      // Pro records live an hour here, so that a record can outlive its retention.
      plans: { pro: { retention_hours: 1 } },
    });
  });
  after(() => d?.close());

  let n = 0;
  const fresh = () => `${d.origin}/page-${++n}`;

  it('the same request twice renders once: the second is a hit that still costs its unit', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const first = await capture(d.t, a.key, { url });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    assert.equal(first.body.cached, false);
    assert.equal(first.headers.get('x-cache'), 'MISS');
    assert.ok(Number(first.headers.get('x-render-time-ms')) > 0, 'a render says its time');
    assert.equal(first.headers.get('x-target-status'), '200');
    assert.deepEqual(first.body.quota, { used: 1, limit: 100 });
    assert.equal(d.renderer.rendersOf(url), 1);
    const image = Buffer.from(await (await fetch(first.body.image_url)).arrayBuffer());
    assert.deepEqual(imageSize(image), { format: 'png', width: 320, height: 200 });

    const second = await capture(d.t, a.key, { url });
    assert.equal(second.status, 201);
    assert.equal(second.body.cached, true);
    assert.equal(second.headers.get('x-cache'), 'HIT');
    assert.equal(second.headers.get('x-render-time-ms'), null, 'no render, no render time');
    assert.equal(second.body.image_url, first.body.image_url);
    assert.equal(second.body.expires_at, first.body.expires_at);
    assert.deepEqual(second.body.quota, { used: 2, limit: 100 });
    assert.equal(d.renderer.rendersOf(url), 1, 'no second render');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 2, days: 2 });
  });

  it('different options are different entries, each rendered once', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const variants: Array<Record<string, unknown>> = [
      {},
      { width: 321 },
      { height: 201 },
      { format: 'jpeg' },
      { format: 'jpeg', quality: 40 },
      { full_page: true },
      { dark_mode: true },
      { delay: 10 },
      { fail_on_http_error: true },
    ];
    const urls = new Set<string>();
    for (const [i, v] of variants.entries()) {
      const miss = await capture(d.t, a.key, { url, ...v });
      assert.equal(miss.status, 201, JSON.stringify(miss.body));
      assert.equal(miss.body.cached, false, JSON.stringify(v));
      assert.equal(d.renderer.rendersOf(url), i + 1);
      urls.add(miss.body.image_url);
    }
    assert.equal(urls.size, variants.length, 'one image per entry');
    for (const v of variants) {
      const hit = await capture(d.t, a.key, { url, ...v });
      assert.equal(hit.body.cached, true, JSON.stringify(v));
    }
    assert.equal(d.renderer.rendersOf(url), variants.length, 'the hits rendered nothing');
    const jpeg = await capture(d.t, a.key, { url, format: 'jpeg', width: 300, height: 150 });
    const bytes = Buffer.from(await (await fetch(jpeg.body.image_url)).arrayBuffer());
    assert.deepEqual(imageSize(bytes), { format: 'jpeg', width: 300, height: 150 });
  });

  it("never serves one account's entry to another", async () => {
    const a = await account(d.t, { key: true });
    const b = await account(d.t, { key: true });
    const url = fresh();
    const mine = await capture(d.t, a.key, { url });
    const theirs = await capture(d.t, b.key, { url });
    assert.equal(theirs.status, 201);
    assert.equal(theirs.body.cached, false);
    assert.notEqual(theirs.body.image_url, mine.body.image_url);
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it('cache_ttl: served while younger than it, 0 never, each value its own entry (default 900)', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    assert.equal((await capture(d.t, a.key, { url, cache_ttl: 60 })).body.cached, false);
    assert.equal((await capture(d.t, a.key, { url, cache_ttl: 60 })).body.cached, true);
    ahead += MINUTE + 1_000;
    assert.equal((await capture(d.t, a.key, { url, cache_ttl: 60 })).body.cached, false);
    assert.equal(d.renderer.rendersOf(url), 2);

    const zero = fresh();
    for (let i = 0; i < 2; i++) {
      const res = await capture(d.t, a.key, { url: zero, cache_ttl: 0 });
      assert.equal(res.status, 201);
      assert.equal(res.body.cached, false);
    }
    assert.equal(d.renderer.rendersOf(zero), 2, 'cache_ttl 0 renders every time');

    const values = fresh();
    assert.equal((await capture(d.t, a.key, { url: values })).body.cached, false);
    assert.equal((await capture(d.t, a.key, { url: values, cache_ttl: 900 })).body.cached, true);
    assert.equal((await capture(d.t, a.key, { url: values, cache_ttl: 3_600 })).body.cached, false);
    assert.equal((await capture(d.t, a.key, { url: values, cache_ttl: 3_600 })).body.cached, true);
    ahead += 14 * MINUTE;
    assert.equal((await capture(d.t, a.key, { url: values })).body.cached, true, 'at 14 min');
    ahead += 2 * MINUTE;
    assert.equal((await capture(d.t, a.key, { url: values })).body.cached, false, 'past 15 min');
    assert.equal(
      (await capture(d.t, a.key, { url: values, cache_ttl: 3_600 })).body.cached,
      true,
      'the hour-long entry still serves',
    );
    assert.equal(d.renderer.rendersOf(values), 3);
  });

  it('fresh (Pro) renders anew and replaces the entry; on Free it is a 400 that costs nothing', async () => {
    const p = await account(d.t, { plan: 'pro', key: true });
    const url = fresh();
    const first = await capture(d.t, p.key, { url });
    assert.equal((await capture(d.t, p.key, { url })).body.id, first.body.id);
    const anew = await capture(d.t, p.key, { url, fresh: true });
    assert.equal(anew.status, 201);
    assert.equal(anew.body.cached, false);
    assert.notEqual(anew.body.id, first.body.id);
    assert.equal(d.renderer.rendersOf(url), 2);
    const after = await capture(d.t, p.key, { url });
    assert.equal(after.body.cached, true);
    assert.equal(after.body.id, anew.body.id, 'the fresh render replaced the entry');

    const f = await account(d.t, { key: true });
    const refused = await capture(d.t, f.key, { url, fresh: true });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'plan_restriction');
    assert.deepEqual(await usage(d.t, f.cookie), { used: 0, days: 0 });
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it('a deleted record leaves the cache', async () => {
    const p = await account(d.t, { plan: 'pro', key: true });
    const url = fresh();
    const first = await capture(d.t, p.key, { url });
    const del = await d.t.fetch(`/v1/screenshots/${first.body.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': p.key },
    });
    assert.equal(del.status, 200);
    const again = await capture(d.t, p.key, { url });
    assert.equal(again.body.cached, false);
    assert.notEqual(again.body.id, first.body.id);
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it("never serves a result past the plan's retention, whatever cache_ttl says", async () => {
    const p = await account(d.t, { plan: 'pro', key: true }); // an hour's retention here
    const url = fresh();
    assert.equal((await capture(d.t, p.key, { url, cache_ttl: 86_400 })).body.cached, false);
    ahead += 61 * MINUTE;
    const later = await capture(d.t, p.key, { url, cache_ttl: 86_400 });
    assert.equal(later.body.cached, false);
    assert.equal(d.renderer.rendersOf(url), 2);
  });
});
