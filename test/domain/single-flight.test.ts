/**
 * Single flight (docs/api.md, "The result cache": identical requests in flight at once are
 * rendered once; the request that rendered answers `cached: false`, those that waited
 * `cached: true`; "Order of checks": each API request costs its unit, and only a 201 costs
 * one). Through the real app on SQLite with the in-memory renderer, whose holds keep a render
 * in flight while the other requests arrive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../src/domain/errors.ts';
import { account } from '../helpers/accounts.ts';
import {
  capture,
  type DomainApp,
  heldUnits,
  startDomainApp,
  until,
  usage,
} from '../helpers/domain.ts';

describe('domain: single flight', () => {
  let d: DomainApp;
  before(async () => {
    d = await startDomainApp();
  });
  after(() => d?.close());

  let n = 0;
  const fresh = () => `${d.origin}/flight-${++n}`;
  const COUNT = 5;

  it('identical requests in flight render once: one answers cached false, every one pays its unit', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const pending = Array.from({ length: COUNT }, () => capture(d.t, a.key, { url }));
    await hold.reached;
    // Every request has its unit (held for the render that follows) before the render ends.
    await until(async () => (await usage(d.t, a.cookie)).used === COUNT);
    assert.equal(hold.waiting, 1, 'one render in flight for all of them');
    hold.release();
    const answers = await Promise.all(pending);
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(COUNT).fill(201),
    );
    assert.equal(answers.filter((r) => r.body.cached === false).length, 1);
    assert.equal(answers.filter((r) => r.headers.get('x-cache') === 'MISS').length, 1);
    assert.equal(new Set(answers.map((r) => r.body.image_url)).size, 1, 'one image');
    assert.deepEqual(
      answers.map((r) => r.body.quota.used).sort(),
      Array.from({ length: COUNT }, (_, i) => i + 1),
      'each answer reports its own unit',
    );
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: COUNT, days: COUNT });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });

  it("two accounts' identical requests are two renders", async () => {
    const a = await account(d.t, { key: true });
    const b = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const pending = [capture(d.t, a.key, { url }), capture(d.t, b.key, { url })];
    await until(() => hold.waiting === 2);
    hold.release();
    const answers = await Promise.all(pending);
    assert.deepEqual(
      answers.map((r) => [r.status, r.body.cached]),
      [
        [201, false],
        [201, false],
      ],
    );
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it('a fresh request (Pro) does not join a render in flight: it renders anew', async () => {
    const p = await account(d.t, { plan: 'pro', key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const first = capture(d.t, p.key, { url });
    await hold.reached;
    const anew = capture(d.t, p.key, { url, fresh: true });
    await until(() => hold.waiting === 2);
    hold.release();
    const answers = await Promise.all([first, anew]);
    assert.deepEqual(
      answers.map((r) => [r.status, r.body.cached]),
      [
        [201, false],
        [201, false],
      ],
    );
    assert.notEqual(answers[0]?.body.id, answers[1]?.body.id);
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it('a render that fails fails every request that joined it, each unit given back; the next request renders', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    d.renderer.script(url, { fail: () => new AppError('target_error', 'the page crashed') });
    const hold = d.renderer.hold(url);
    const pending = Array.from({ length: 3 }, () => capture(d.t, a.key, { url }));
    await hold.reached;
    await until(async () => (await usage(d.t, a.cookie)).used === 3);
    hold.release();
    const answers = await Promise.all(pending);
    assert.deepEqual(
      answers.map((r) => [r.status, r.body.code]),
      Array(3).fill([502, 'target_error']),
    );
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
    // A failure is not cached: once the page is fine, the same request renders.
    d.renderer.script(url, {});
    const later = await capture(d.t, a.key, { url });
    assert.equal(later.status, 201);
    assert.equal(later.body.cached, false);
    assert.equal(d.renderer.rendersOf(url), 2);
  });
});
