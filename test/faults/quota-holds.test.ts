/**
 * Holds on the quota units of captures in flight (domain/quota/quota-holds.ts), on both
 * databases: a render's unit is held while it runs and the node renews the hold past its
 * lease; a cache hit writes no hold; an async job's unit is the job's (its row holds it, with
 * its own lease) and the hold sweep never takes it back while the job lives.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sql } from 'kysely';
import { account } from '../helpers/accounts.ts';
import { describeEachDatabase, postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';

describeEachDatabase('quota holds', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  const held: Array<() => void> = [];
  before(async () => {
    site = await startSite({
      '/': page('<h1>held</h1>'),
      '/slow': (_req, res) =>
        new Promise<void>((resolve) => {
          held.push(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>slow</h1>'));
            resolve();
          });
        }),
    });
    t = await startApp({
      db,
      // A short lease, renewed every 2/3 s: a render of several seconds outlives it.
      env: { EGRESS_ALLOWLIST: site.hostPort, QUOTA_HOLD_LEASE_MS: '2000', ASYNC_WORKERS: '0' },
      plans: { free: { rate_per_minute: 1000 }, pro: { max_queued_jobs: 2 } },
    });
  });
  after(async () => {
    for (const answer of held.splice(0)) answer();
    await t?.close();
    await site?.close();
  });

  const holds = async () =>
    Number(
      (
        await t.deps.database.db
          .selectFrom('quota_holds')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** The last hold id handed out (deleted holds included). */
  const lastHoldId = async () => {
    const { rows } = await sql<{ n: number }>`${sql.raw(
      db === 'postgres'
        ? 'SELECT last_value AS n FROM quota_holds_id_seq'
        : "SELECT seq AS n FROM sqlite_sequence WHERE name = 'quota_holds'",
    )}`.execute(t.deps.database.db);
    return Number(rows[0]?.n ?? 0);
  };
  const used = async (key: string) =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  it('holds a render’s unit while it runs, past the lease, and keeps it when it delivers', async () => {
    const a = await account(t, { key: true });
    const pending = postCapture(t, a.key, { url: `${site.origin}/slow`, width: 320, height: 200 });
    while (held.length === 0) await sleep(20);
    assert.equal(await holds(), 1, 'the render holds its unit');
    // Three leases later, renewed all along: the sweep finds nothing expired.
    await sleep(6_000);
    assert.equal(await t.deps.returnHolds(), 0);
    assert.equal(await used(a.key), 1);
    for (const answer of held.splice(0)) answer();
    const res = await pending;
    assert.equal(res.status, 201, await res.text());
    assert.equal(await holds(), 0, 'kept: the hold is gone');
    assert.equal(await used(a.key), 1);
  });

  it('writes no hold for a cache hit', async () => {
    const a = await account(t, { key: true });
    const body = { url: `${site.origin}/`, width: 321, height: 200 };
    assert.equal((await postCapture(t, a.key, body)).status, 201);
    const lastHold = await lastHoldId();
    const hit = await postCapture(t, a.key, body);
    assert.equal(hit.status, 201);
    assert.equal(((await hit.json()) as { cached: boolean }).cached, true);
    assert.equal(await lastHoldId(), lastHold, 'no hold was ever written');
    assert.equal(await used(a.key), 2);
  });

  it('leaves a queued job’s unit to the job: the hold sweep does not take it back', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    const res = await postCapture(t, p.key, { url: `${site.origin}/`, async: true });
    assert.equal(res.status, 202, await res.text());
    assert.equal(await holds(), 0, 'the job row holds the unit, not a hold');
    await sleep(2_500); // past a lease
    await t.deps.returnHolds();
    assert.equal(await used(p.key), 1);
  });
});
