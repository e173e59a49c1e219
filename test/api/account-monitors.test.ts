/**
 * The dashboard's monitors (docs/api.md, "Dashboard reads"): /v1/account/monitors serves the
 * operations of /v1/monitors to the session cookie, on both databases. One set of monitors
 * seen through both doors; another account's session gets 404 for every operation; a
 * cookie-authenticated change from another site is refused and changes nothing; Free is told
 * monitors are Pro; the changes draw on the account's rates as with a key, the reads on its
 * dashboard reads; a delete takes the monitor's images at once. (Every
 * operation's 401s and 403s are also walked by test/api/route-auth.test.ts.)
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { account } from '../helpers/accounts.ts';
import { describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { ColourBox, type FixtureSite, sleep, startSite } from '../helpers/fixtures.ts';

type Json = Record<string, unknown>;
const PRO_RATE = 40;

describeEachDatabase('monitors by session (the dashboard)', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  const box = new ColourBox(160, 100);

  before(async () => {
    site = await startSite({
      '/box': box.handler,
    });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { pro: { rate_per_minute: PRO_RATE } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  /** A request as the dashboard makes it: the cookie, and our own origin on a change. */
  const dash = (
    cookie: string,
    path: string,
    init: { method?: string; json?: unknown; headers?: Record<string, string> } = {},
  ) =>
    t.fetch(path, {
      cookie,
      ...(init.method ? { method: init.method } : {}),
      ...(init.json !== undefined ? { json: init.json } : {}),
      headers: { ...(init.method ? { origin: t.url } : {}), ...init.headers },
    });
  const monitorBody = {
    name: 'box',
    url: '',
    options: { width: 320, height: 200 },
    every: '1d',
  };
  const create = async (cookie: string): Promise<Json> => {
    const res = await dash(cookie, '/v1/account/monitors', {
      method: 'POST',
      json: { ...monitorBody, url: `${site.origin}/box` },
    });
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as Json;
  };
  const runs = async (cookie: string, id: string) => {
    const res = await dash(cookie, `/v1/account/monitors/${id}/runs`);
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { data: Json[] }).data;
  };
  /** Runs it now through the dashboard and waits for the run's end. */
  const runNow = async (cookie: string, id: string): Promise<Json> => {
    const res = await dash(cookie, `/v1/account/monitors/${id}/run`, { method: 'POST' });
    assert.equal(res.status, 202, await res.clone().text());
    assert.equal(res.headers.get('x-ratelimit-limit'), String(PRO_RATE), 'the capture rate');
    const { id: runId } = (await res.json()) as { id: string };
    const end = Date.now() + 60_000;
    for (;;) {
      const run = (await runs(cookie, id)).find((r) => r.id === runId);
      if (run && run.status !== 'running') return run;
      assert.ok(Date.now() < end, 'the run ended in time');
      // Well inside the dashboard's reads per minute (they are limited), however slow a run.
      await sleep(250);
    }
  };

  it('creates, lists, changes, runs and deletes: the same monitors as the API key sees', async () => {
    const a = await account(t, { plan: 'pro', key: true });
    box.colour = 'rgb(0, 0, 255)';
    const m = await create(a.cookie);
    const id = String(m.id);
    assert.match(id, /^mon_/);
    assert.equal(m.status, 'active');

    const listed = await dash(a.cookie, '/v1/account/monitors');
    assert.equal(listed.status, 200);
    assert.equal(
      listed.headers.get('x-ratelimit-limit'),
      String(BOUNDS.rates.otherEndpointsPerMinute),
      "a read draws on the dashboard's reads (test/api/dashboard-reads.test.ts)",
    );
    assert.deepEqual(
      ((await listed.json()) as { data: Json[] }).data.map((x) => x.id),
      [id],
    );
    const byKey = await t.fetch(`/v1/monitors/${id}`, { headers: { 'x-api-key': a.key } });
    assert.equal(byKey.status, 200, 'the key sees the monitor the dashboard made');
    assert.deepEqual(await byKey.json(), m);

    const patched = await dash(a.cookie, `/v1/account/monitors/${id}`, {
      method: 'PATCH',
      json: { status: 'paused', name: 'renamed', threshold: 0.01, every: '7d' },
    });
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.equal(
      patched.headers.get('x-ratelimit-limit'),
      String(BOUNDS.rates.otherEndpointsPerMinute),
      'a change draws on the non-capture rate',
    );
    const changedMonitor = (await patched.json()) as Json;
    assert.equal(changedMonitor.status, 'paused');
    assert.equal(changedMonitor.name, 'renamed');
    assert.equal(changedMonitor.threshold, 0.01);
    assert.equal(changedMonitor.every, '7d');
    const resumed = await dash(a.cookie, `/v1/account/monitors/${id}`, {
      method: 'PATCH',
      json: { status: 'active' },
    });
    assert.equal(((await resumed.json()) as Json).status, 'active');

    const first = await runNow(a.cookie, id);
    assert.equal(first.status, 'succeeded', JSON.stringify(first));
    assert.equal(first.changed, false);
    box.colour = 'rgb(0, 160, 0)';
    const second = await runNow(a.cookie, id);
    assert.equal(second.changed, true, JSON.stringify(second));
    const diff = await fetch(String(second.diff_url));
    assert.equal(diff.status, 200);
    assert.equal(diff.headers.get('content-type'), 'image/png');
    const byKeyRuns = await t.fetch(`/v1/monitors/${id}/runs`, { headers: { 'x-api-key': a.key } });
    assert.deepEqual(await byKeyRuns.json(), {
      data: await runs(a.cookie, id),
      has_more: false,
      next_cursor: null,
    });
    const paged = await dash(a.cookie, `/v1/account/monitors/${id}/runs?limit=1`);
    const one = (await paged.json()) as { data: Json[]; has_more: boolean; next_cursor: string };
    assert.deepEqual(
      one.data.map((r) => r.id),
      [second.id],
    );
    assert.equal(one.has_more, true);
    const rest = await dash(
      a.cookie,
      `/v1/account/monitors/${id}/runs?limit=1&cursor=${encodeURIComponent(one.next_cursor)}`,
    );
    assert.deepEqual(
      ((await rest.json()) as { data: Json[] }).data.map((r) => r.id),
      [first.id],
    );

    const del = await dash(a.cookie, `/v1/account/monitors/${id}`, { method: 'DELETE' });
    assert.equal(del.status, 200, await del.clone().text());
    assert.equal((await dash(a.cookie, `/v1/account/monitors/${id}`)).status, 404);
    // Its images went with it, as by key: each run's, the diff, the baseline.
    for (const url of [first.image_url, second.image_url, second.diff_url]) {
      assert.equal((await fetch(String(url))).status, 404, String(url));
    }
    assert.equal(
      (await t.fetch(`/v1/monitors/${id}`, { headers: { 'x-api-key': a.key } })).status,
      404,
    );
  });

  it("another account's session gets 404 for every operation, and an empty list", async () => {
    const owner = await account(t, { plan: 'pro' });
    const other = await account(t, { plan: 'pro' });
    const id = String((await create(owner.cookie)).id);
    for (const [method, path] of [
      ['GET', `/v1/account/monitors/${id}`],
      ['PATCH', `/v1/account/monitors/${id}`],
      ['DELETE', `/v1/account/monitors/${id}`],
      ['POST', `/v1/account/monitors/${id}/run`],
      ['GET', `/v1/account/monitors/${id}/runs`],
    ] as const) {
      const res = await dash(other.cookie, path, {
        ...(method === 'GET' ? {} : { method }),
        ...(method === 'PATCH' ? { json: { status: 'paused' } } : {}),
      });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.deepEqual(await res.json(), { error: 'monitor not found' }, `${method} ${path}`);
    }
    const list = await dash(other.cookie, '/v1/account/monitors');
    assert.deepEqual(((await list.json()) as { data: Json[] }).data, []);
    // Untouched: still active, never run.
    const mine = (await (await dash(owner.cookie, `/v1/account/monitors/${id}`)).json()) as Json;
    assert.equal(mine.status, 'active');
    assert.deepEqual(await runs(owner.cookie, id), []);
  });

  it('refuses a cookie-authenticated change from another site, and nothing changes', async () => {
    const a = await account(t, { plan: 'pro' });
    const id = String((await create(a.cookie)).id);
    const crossSite: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of crossSite) {
      for (const [method, path, json] of [
        ['POST', '/v1/account/monitors', { ...monitorBody, url: `${site.origin}/box` }],
        ['PATCH', `/v1/account/monitors/${id}`, { status: 'paused' }],
        ['POST', `/v1/account/monitors/${id}/run`, undefined],
        ['DELETE', `/v1/account/monitors/${id}`, undefined],
      ] as const) {
        const res = await t.fetch(path, {
          method,
          cookie: a.cookie,
          headers,
          ...(json ? { json } : {}),
        });
        assert.equal(res.status, 403, `${method} ${path} ${JSON.stringify(headers)}`);
        assert.deepEqual(await res.json(), { error: 'cross-site request refused' });
      }
    }
    const list = (await (await dash(a.cookie, '/v1/account/monitors')).json()) as { data: Json[] };
    assert.deepEqual(
      list.data.map((m) => [m.id, m.status]),
      [[id, 'active']],
    );
    assert.deepEqual(await runs(a.cookie, id), []);
  });

  it('tells a Free account that monitors are Pro, and an API key is no way in', async () => {
    const free = await account(t);
    const res = await dash(free.cookie, '/v1/account/monitors', {
      method: 'POST',
      json: { ...monitorBody, url: `${site.origin}/box` },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      error: 'monitors is not available on the free plan',
      code: 'plan_restriction',
    });
    const pro = await account(t, { plan: 'pro', key: true });
    const byKey = await t.fetch('/v1/account/monitors', { headers: { 'x-api-key': pro.key } });
    assert.equal(byKey.status, 401);
  });
});
