/**
 * The key re-check (docs/api.md, "Authentication": revocation is immediate, in-flight
 * captures included; docs/security.md, "Revocation"): a key revoked while its render runs
 * ends the capture with 401 and spends no unit, whether the revocation's event arrives
 * (the render is stopped) or not (the key read after the render refuses the answer). Through
 * the real app on SQLite with the in-memory renderer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { account, revokeSilently } from '../helpers/accounts.ts';
import { createKey } from '../helpers/app.ts';
import {
  capture,
  type DomainApp,
  heldUnits,
  startDomainApp,
  until,
  usage,
} from '../helpers/domain.ts';

describe('domain: the key re-check', () => {
  let d: DomainApp;
  before(async () => {
    d = await startDomainApp();
  });
  after(() => d?.close());

  let n = 0;
  const fresh = () => `${d.origin}/key-${++n}`;
  const revoke = async (a: { keyId: number; cookie: string }, keyId = a.keyId) => {
    const res = await d.t.fetch(`/v1/keys/${keyId}`, { method: 'DELETE', cookie: a.cookie });
    assert.equal(res.status, 200);
  };

  it('a key revoked while its render is held: 401 at once, the render stopped, no unit spent', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const abortedBefore = d.renderer.aborted;
    const pending = capture(d.t, a.key, { url });
    await hold.reached;
    assert.equal(await heldUnits(d.t, a.id), 1);
    await revoke(a);
    // Answered while the render is still held: the revocation ended it, not the render.
    const res = await pending;
    assert.equal(hold.waiting, 0, 'the render left the hold');
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized' });
    assert.equal(d.renderer.aborted, abortedBefore + 1, 'the render was aborted');
    hold.release();
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
    // The stopped render left no record: the account's other key renders it anew.
    const other = await createKey(d.t, a.cookie);
    const again = await capture(d.t, other.key, { url });
    assert.equal(again.body.cached, false);
    assert.equal(d.renderer.rendersOf(url), 2);
  });

  it('a key revoked with no event while its render runs: the read after the render answers 401, the unit goes back', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const hold = d.renderer.hold(url);
    const abortedBefore = d.renderer.aborted;
    const pending = capture(d.t, a.key, { url });
    await hold.reached;
    revokeSilently(d.t, a.keyId);
    hold.release();
    const res = await pending;
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { error: 'unauthorized' });
    assert.equal(d.renderer.aborted, abortedBefore, 'no event: the render ran to its end');
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
    // And the key hook refuses the next request itself.
    assert.equal((await capture(d.t, a.key, { url })).status, 401);
  });

  it("a key revoked while its request waits on another key's render: that request alone is refused", async () => {
    const a = await account(d.t, { key: true });
    const second = await createKey(d.t, a.cookie, 'second');
    const url = fresh();
    const hold = d.renderer.hold(url);
    const abortedBefore = d.renderer.aborted;
    const leader = capture(d.t, a.key, { url });
    await hold.reached;
    const joined = capture(d.t, second.key, { url });
    // Past authentication once it has its unit; it then joins the held render.
    await until(async () => (await usage(d.t, a.cookie)).used === 2);
    await revoke(a, second.id);
    const refused = await joined;
    assert.equal(refused.status, 401);
    assert.deepEqual(refused.body, { error: 'unauthorized' });
    assert.equal(hold.waiting, 1, 'the render goes on for the leader');
    hold.release();
    const led = await leader;
    assert.equal(led.status, 201);
    assert.equal(led.body.cached, false);
    assert.equal(d.renderer.rendersOf(url), 1);
    assert.equal(d.renderer.aborted, abortedBefore);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
  });
});
