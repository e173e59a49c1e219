/**
 * The client library's `monitors` calls (packages/client) against a real running service and
 * real Chromium: create, list in cursor pages, get, update (pause, resume, every, threshold),
 * run and the runs that show it end (a recoloured area found changed, with a diff, and the
 * signed monitor.changed event checked with verifyWebhook), delete, and the refusals as typed ShotsmithErrors: a Free key, another account's monitor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import {
  type MonitorRun,
  Shotsmith,
  ShotsmithError,
  verifyWebhook,
} from '../../packages/client/src/index.ts';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { ColourBox, type FixtureSite, sleep, startSite } from '../helpers/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';

/** The refusal a call ends in (the test fails if it succeeds). */
async function refusal(call: Promise<unknown>): Promise<ShotsmithError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof ShotsmithError, String(err));
    return err;
  }
  throw new Error('the call succeeded; a refusal was expected');
}

describe('client library: monitors', () => {
  let t: TestApp;
  let site: FixtureSite;
  let hooks: WebhookReceiver;
  // The /box page's box, whose colour the test changes between runs.
  const box = new ColourBox();
  before(async () => {
    site = await startSite({
      '/box': box.handler,
    });
    hooks = await startWebhookReceiver();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}` },
      plans: { pro: { rate_per_minute: 1000, max_monitors: 5 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await hooks?.close();
  });

  /** A new account with a key (accounts.ts): a client with that key, and the account's cookie. */
  const withClient = async (plan: TestPlan) => {
    const a = await account(t, { plan, key: true });
    return Object.assign(new Shotsmith({ apiKey: a.key, baseUrl: t.url }), { cookie: a.cookie });
  };

  /** Reads the monitor's runs until `runId` has ended. */
  const ended = async (api: Shotsmith, id: string, runId: string): Promise<MonitorRun> => {
    const end = Date.now() + 120_000;
    for (;;) {
      const run = (await api.monitors.runs(id)).data.find((r) => r.id === runId);
      assert.ok(run, `run ${runId} is listed`);
      if (run.status !== 'running') return run;
      assert.ok(Date.now() < end, `run ${runId} ended in time`);
      await sleep(200);
    }
  };

  it('creates, reads, lists in pages, updates and deletes', async () => {
    const api = await withClient('pro');
    const url = `${site.origin}/box`;
    const made = await api.monitors.create({
      name: 'box',
      url,
      options: { width: 400, height: 300 },
      every: '1h',
      threshold: 0.01,
      ignore_selectors: ['#clock'],
    });
    assert.match(made.id, /^mon_[0-9A-Za-z]{24}$/);
    assert.deepEqual(
      [made.name, made.url, made.every, made.threshold, made.status],
      ['box', url, '1h', 0.01, 'active'],
    );
    assert.deepEqual(made.options, { width: 400, height: 300 });
    assert.deepEqual(made.ignore_selectors, ['#clock']);
    assert.equal(made.last_run_at, null);
    assert.ok(Date.parse(made.next_run_at) > Date.now() - 60_000, made.next_run_at);
    assert.deepEqual(await api.monitors.get(made.id), made);

    // Two more: three monitors listed two a page, most recent first, nothing twice.
    const second = await api.monitors.create({ url, every: '1d' });
    const third = await api.monitors.create({ url, every: '7d' });
    const first = await api.monitors.list({ limit: 2 });
    assert.equal(first.data.length, 2);
    assert.ok(first.next_cursor, 'a second page');
    const rest = await api.monitors.list({ limit: 2, cursor: first.next_cursor });
    assert.equal(rest.next_cursor, null);
    assert.deepEqual(
      [...first.data, ...rest.data].map((m) => m.id),
      [third.id, second.id, made.id],
    );

    const paused = await api.monitors.update(made.id, { status: 'paused' });
    assert.equal(paused.status, 'paused');
    assert.equal((await api.monitors.get(made.id)).status, 'paused');
    const resumed = await api.monitors.update(made.id, {
      status: 'active',
      every: '6h',
      threshold: 0.05,
    });
    assert.deepEqual([resumed.status, resumed.every, resumed.threshold], ['active', '6h', 0.05]);
    const badEvery = await refusal(
      api.monitors.update(made.id, { every: '2h' } as unknown as { every: '1h' }),
    );
    assert.deepEqual([badEvery.status, badEvery.code], [400, 'invalid_request']);
    assert.match(badEvery.message, /every/);

    await api.monitors.delete(second.id);
    const gone = await refusal(api.monitors.get(second.id));
    assert.deepEqual([gone.status, gone.code], [404, 'not_found']);
    const twice = await refusal(api.monitors.delete(second.id));
    assert.equal(twice.status, 404);
    assert.deepEqual(
      (await api.monitors.list()).data.map((m) => m.id),
      [third.id, made.id],
    );
  });

  it('runs now, and the runs show an unchanged run then a changed one with a diff', async () => {
    const api = await withClient('pro');
    box.colour = 'rgb(0, 0, 255)';
    const m = await api.monitors.create({
      url: `${site.origin}/box`,
      options: { width: 400, height: 300 },
      every: '7d',
      webhook_url: hooks.url,
    });
    assert.equal(m.webhook_url, hooks.url);
    const started = await api.monitors.run(m.id);
    assert.match(started.id, /^run_[0-9A-Za-z]{24}$/);
    assert.equal(started.status, 'running');
    const baseline = await ended(api, m.id, started.id);
    assert.equal(baseline.status, 'succeeded', JSON.stringify(baseline));
    assert.equal(baseline.changed, false, 'the first run has nothing to compare with');
    assert.equal(baseline.diff_url, undefined);

    box.colour = 'rgb(0, 160, 0)';
    const next = await api.monitors.run(m.id);
    const changed = await ended(api, m.id, next.id);
    assert.equal(changed.status, 'succeeded', JSON.stringify(changed));
    assert.equal(changed.changed, true);
    // The box is 200 x 150 of 400 x 300: a quarter of the pixels.
    assert.ok(
      Math.abs((changed.changed_fraction ?? 0) - 0.25) < 0.02,
      String(changed.changed_fraction),
    );
    assert.ok(changed.diff_url, 'a changed run has a diff');
    const diff = await fetch(changed.diff_url);
    assert.equal(diff.status, 200);
    const png = PNG.sync.read(Buffer.from(await diff.arrayBuffer()));
    assert.deepEqual([png.width, png.height], [400, 300]);

    // Newest first, one run a page, the cursor leading to the older run.
    const newest = await api.monitors.runs(m.id, { limit: 1 });
    assert.deepEqual(
      newest.data.map((r) => r.id),
      [next.id],
    );
    assert.ok(newest.next_cursor);
    const older = await api.monitors.runs(m.id, { limit: 1, cursor: newest.next_cursor });
    assert.deepEqual(
      older.data.map((r) => r.id),
      [started.id],
    );
    const got = await api.monitors.get(m.id);
    assert.ok(got.last_run_at !== null && got.last_change_at !== null, JSON.stringify(got));

    // One event, for the changed run, signed with the account's secret.
    const [hook] = await hooks.waitFor(1);
    assert.ok(hook);
    const secret = (
      (await (await t.fetch('/v1/webhooks/secret', { cookie: api.cookie })).json()) as {
        secret: string;
      }
    ).secret;
    const event = await verifyWebhook(secret, new Headers(hook.headers as HeadersInit), hook.body);
    assert.equal(event.type, 'monitor.changed');
    if (event.type !== 'monitor.changed') return;
    assert.deepEqual(event.data, {
      monitor_id: m.id,
      run_id: next.id,
      changed_fraction: changed.changed_fraction,
      image_url: changed.image_url,
      previous_image_url: baseline.image_url,
      diff_url: changed.diff_url,
    });
  });

  it('refuses a Free key and another account’s monitor with typed errors', async () => {
    const free = await withClient('free');
    const plan = await refusal(free.monitors.create({ url: `${site.origin}/box`, every: '1h' }));
    assert.ok(plan instanceof ShotsmithError);
    assert.deepEqual([plan.status, plan.code], [400, 'plan_restriction']);
    assert.match(plan.message, /monitors is not available on the free plan/);
    assert.deepEqual((await free.monitors.list()).data, []);

    const owner = await withClient('pro');
    const other = await withClient('pro');
    const m = await owner.monitors.create({ url: `${site.origin}/box`, every: '7d' });
    for (const call of [
      () => other.monitors.get(m.id),
      () => other.monitors.update(m.id, { status: 'paused' }),
      () => other.monitors.run(m.id),
      () => other.monitors.runs(m.id),
      () => other.monitors.delete(m.id),
    ]) {
      const refused = await refusal(call());
      assert.deepEqual([refused.status, refused.code], [404, 'not_found']);
    }
    assert.deepEqual((await other.monitors.list()).data, []);
    assert.equal((await owner.monitors.get(m.id)).status, 'active', 'untouched by the other');
    assert.deepEqual((await owner.monitors.runs(m.id)).data, [], 'no run was started');

    const badKey = new Shotsmith({ apiKey: 'sk_live_nope', baseUrl: t.url });
    const unauthorized = await refusal(badKey.monitors.list());
    assert.deepEqual([unauthorized.status, unauthorized.code], [401, 'unauthorized']);
  });
});
