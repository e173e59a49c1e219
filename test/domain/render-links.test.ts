/**
 * Signed render links, charged per render (docs/api.md, "Signed render links", "What a link
 * costs"; run-capture.ts `perRender`): a link that renders costs one unit, taken right before
 * the render and given back if it fails; a link answered from the cache, or one that joins a
 * render in flight, costs none; 402 when the month is spent and the link would render.
 * Through the real app on SQLite with the in-memory renderer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/domain/errors.ts';
import { account } from '../helpers/accounts.ts';
import {
  capture,
  type DomainApp,
  getLink,
  heldUnits,
  startDomainApp,
  usage,
} from '../helpers/domain.ts';
import { imageSize } from '../helpers/fixtures.ts';

const QUOTA = 3;

describe('domain: render links, charged per render', () => {
  let d: DomainApp;
  before(async () => {
    d = await startDomainApp({ plans: { free: { monthly_quota: QUOTA } } });
  });
  after(() => d?.close());

  let n = 0;
  const fresh = () => `${d.origin}/link-${++n}`;

  it("a link's first request renders and costs a unit; its repeats are hits and cost none", async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const first = await getLink(d.t, a, [['url', url]]);
    assert.equal(first.status, 302, await first.clone().text());
    assert.equal(first.headers.get('x-cache'), 'MISS');
    const location = first.headers.get('location') ?? '';
    const image = Buffer.from(await (await fetch(location)).arrayBuffer());
    assert.deepEqual(imageSize(image), { format: 'png', width: 320, height: 200 });
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
    for (let i = 0; i < 3; i++) {
      const again = await getLink(d.t, a, [['url', url]]);
      assert.equal(again.status, 302);
      assert.equal(again.headers.get('x-cache'), 'HIT');
      assert.equal(again.headers.get('location'), location);
    }
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 }, 'hits are free');
    assert.equal(d.renderer.rendersOf(url), 1);
  });

  it('the unit is taken right before the render, held while it runs, kept when it delivers', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const pending = getLink(d.t, a, [['url', url]]);
    await hold.reached;
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
    assert.equal(await heldUnits(d.t, a.id), 1);
    hold.release();
    assert.equal((await pending).status, 302);
    assert.equal(await heldUnits(d.t, a.id), 0);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
  });

  it('identical link requests in flight render once, for one unit', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const pending = Array.from({ length: 5 }, () => getLink(d.t, a, [['url', url]]));
    await hold.reached;
    // Those that join take no unit, so nothing shows that they have joined: give them a
    // moment (one that arrives after the render is a cache hit, free as well).
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(hold.waiting, 1);
    hold.release();
    const answers = await Promise.all(pending);
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(5).fill(302),
    );
    assert.equal(answers.filter((r) => r.headers.get('x-cache') === 'MISS').length, 1);
    assert.equal(new Set(answers.map((r) => r.headers.get('location'))).size, 1);
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
  });

  it('a link whose render fails gives its unit back', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    d.renderer.script(url, { fail: () => new AppError('target_error', 'the page crashed') });
    const hold = d.renderer.hold(url);
    const pending = getLink(d.t, a, [['url', url]]);
    await hold.reached;
    assert.equal(await heldUnits(d.t, a.id), 1);
    hold.release();
    const res = await pending;
    assert.equal(res.status, 502);
    assert.equal(((await res.json()) as { code: string }).code, 'target_error');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });

  it('with the month spent, a link that would render is 402 before any render; a cached link still answers, free', async () => {
    const a = await account(d.t, { key: true });
    const cached = fresh();
    assert.equal((await getLink(d.t, a, [['url', cached]])).status, 302);
    for (let i = 0; i < QUOTA - 1; i++) {
      assert.equal((await capture(d.t, a.key, { url: fresh() })).status, 201);
    }
    const url = fresh();
    const refused = await getLink(d.t, a, [['url', url]]);
    assert.equal(refused.status, 402);
    const body = (await refused.json()) as Record<string, unknown>;
    assert.deepEqual(
      [body.error, body.plan, body.used, body.limit],
      ['monthly quota exceeded', 'free', QUOTA, QUOTA],
    );
    assert.equal(d.renderer.rendersOf(url), 0, 'nothing rendered');
    for (let i = 0; i < 3; i++) {
      const hit = await getLink(d.t, a, [['url', cached]]);
      assert.equal(hit.status, 302);
      assert.equal(hit.headers.get('x-cache'), 'HIT');
    }
    assert.deepEqual(await usage(d.t, a.cookie), { used: QUOTA, days: QUOTA });
  });

  it("a link that joins the API's render in flight costs nothing; the API request pays its own", async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const api = capture(d.t, a.key, { url });
    await hold.reached;
    const link = getLink(d.t, a, [['url', url]]);
    await new Promise((r) => setTimeout(r, 200));
    hold.release();
    const [apiAnswer, linkAnswer] = await Promise.all([api, link]);
    assert.equal(apiAnswer.status, 201);
    assert.equal(apiAnswer.body.cached, false);
    assert.equal(linkAnswer.status, 302);
    assert.equal(linkAnswer.headers.get('x-cache'), 'HIT');
    assert.equal(linkAnswer.headers.get('location'), apiAnswer.body.image_url, 'the same image');
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
  });

  it('a key revoked while its link renders: 401, the render stopped, the unit back', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const abortedBefore = d.renderer.aborted;
    const pending = getLink(d.t, a, [['url', url]]);
    await hold.reached;
    assert.equal(await heldUnits(d.t, a.id), 1, 'its unit, taken right before the render');
    const del = await d.t.fetch(`/v1/keys/${a.keyId}`, { method: 'DELETE', cookie: a.cookie });
    assert.equal(del.status, 200);
    const res = await pending;
    hold.release();
    assert.equal(res.status, 401);
    assert.deepEqual(await res.json(), { error: 'unauthorized' });
    assert.equal(d.renderer.aborted, abortedBefore + 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });
});
