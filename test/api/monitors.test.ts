/**
 * Monitors (docs/api.md, "Monitors") through the real HTTP surface, real Chromium and both
 * databases, with a controlled clock (no test waits real minutes): Pro only, bounds and bad
 * options named, runs compared with the baseline (unchanged, a known area recoloured, a
 * changing clock ignored), the diff served, a signed monitor.changed verified with the
 * standardwebhooks package, pause, resume, delete, accounts kept apart, one unit a run, a
 * spent month pausing the monitor, and the schedule: each slot once, a long gap once. Deleting
 * a monitor deletes its images at once (on disk and on S3), a run that ends after it included;
 * an html monitor is answered by its size and digest.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { dayBounds, MINUTE_MS, monthBounds } from '../../src/lib/time.ts';
import { account } from '../helpers/accounts.ts';
import { type DbKind, startApp, type TestApp } from '../helpers/app.ts';
import { ColourBox, type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { type S3Process, startS3Process } from '../helpers/s3rver-process.ts';
import { serviceSkip, TEST_REDIS_URL } from '../helpers/services.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';

type Json = Record<string, unknown>;
const WIDTH = 400;
const HEIGHT = 300;
const QUOTA = 6;

// With Redis configured the schedule is still the database's due-time column (docs/api.md,
// "Monitors"): the variant shows it holds there too.
const VARIANTS: Array<{ name: string; db: DbKind; redis: boolean }> = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  { name: 'postgres', db: 'postgres', redis: false },
  { name: 'postgres + redis', db: 'postgres', redis: true },
];

for (const { name, db, redis } of VARIANTS)
  describe(`monitors [${name}]`, async () => {
    const skip =
      (db === 'postgres' && (await serviceSkip('postgres'))) ||
      (redis && (await serviceSkip('redis')));
    if (skip) {
      describe('skipped', { skip }, () => {});
      return;
    }
    let t: TestApp;
    let site: FixtureSite;
    let hooks: WebhookReceiver;
    // The clock the app reads: real time plus what the test has advanced it by.
    let offset = 0;
    const clock = () => Date.now() + offset;
    // The /box page's known area (a quarter of the viewport), whose colour the runs change.
    const box = new ColourBox();
    let ticks = 0;
    // The X-Token header of each request to /token.
    const tokens: string[] = [];
    // /slow answers once the test lets it (`slowGate`), telling it when asked (`slowAsked`).
    let slowAsked = Promise.withResolvers<void>();
    let slowGate = Promise.withResolvers<void>();
    before(async () => {
      hooks = await startWebhookReceiver();
      site = await startSite({
        '/static': page(
          `<div style="width:${WIDTH}px;height:${HEIGHT}px;background:#eee">same</div>`,
        ),
        '/box': () => undefined,
        '/clock': () => undefined,
      });
      await site.close();
      site = await startSite({
        '/static': page(`<h1>the same page</h1>`),
        '/token': (req, res) => {
          tokens.push(String(req.headers['x-token']));
          res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>token</h1>'));
        },
        '/slow': async (_req, res) => {
          slowAsked.resolve();
          await slowGate.promise;
          res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>slow</h1>'));
        },
        '/broken': (_req, res) => {
          res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>down</h1>');
        },
        '/box': box.handler,
        '/clock': (_req, res) => {
          ticks++;
          res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              page(
                `<h1>news</h1><div id="clock" style="font-size:40px">${ticks} ${'#'.repeat(ticks)}</div>`,
              ),
            );
        },
      });
      t = await startApp({
        db,
        clock,
        env: {
          EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
          ...(redis
            ? {
                REDIS_URL: TEST_REDIS_URL,
                REDIS_PREFIX: `monitors-${randomBytes(4).toString('hex')}:`,
              }
            : {}),
        },
        plans: {
          free: { rate_per_minute: 1000 },
          pro: { monthly_quota: QUOTA, max_monitors: 3, retention_hours: 1, max_queued_jobs: 1 },
        },
        webhookBackoffMs: [200, 200, 200],
      });
    });
    after(async () => {
      await t?.close();
      await site?.close();
      await hooks?.close();
    });

    const api = (key: string, path: string, init: { method?: string; json?: unknown } = {}) =>
      t.fetch(path, { ...init, headers: { 'x-api-key': key } });
    const create = async (key: string, body: Json) => {
      const res = await api(key, '/v1/monitors', { method: 'POST', json: body });
      assert.equal(res.status, 201, await res.clone().text());
      return (await res.json()) as Json;
    };
    const usage = async (key: string) =>
      ((await (await api(key, '/v1/usage')).json()) as Json).used;
    const runs = async (key: string, id: string) =>
      ((await (await api(key, `/v1/monitors/${id}/runs`)).json()) as { data: Json[] }).data;
    /** Runs the monitor now and waits for the run's end. */
    /** The account's jobs once every one has ended (a worker ends a run, then its job). */
    const endedJobs = async (userId: number, timeoutMs = 60_000) => {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const jobs = await t.deps.database.db
          .selectFrom('capture_jobs')
          .select(['status', 'result', 'error', 'monitor_run_id', 'key_id'])
          .where('user_id', '=', userId)
          .execute();
        if (
          jobs.length > 0 &&
          jobs.every((j) => j.status === 'succeeded' || j.status === 'failed')
        ) {
          return jobs;
        }
        assert.ok(Date.now() < end, `the jobs ended: ${JSON.stringify(jobs)}`);
        await sleep(100);
      }
    };
    const runNow = async (key: string, id: string): Promise<Json> => {
      const res = await api(key, `/v1/monitors/${id}/run`, { method: 'POST' });
      assert.equal(res.status, 202, await res.clone().text());
      const { id: runId } = (await res.json()) as { id: string };
      assert.match(runId, /^run_[0-9A-Za-z]{24}$/);
      const end = Date.now() + 60_000;
      for (;;) {
        const run = (await runs(key, id)).find((r) => r.id === runId);
        if (run && run.status !== 'running') return run;
        assert.ok(Date.now() < end, 'the run ended in time');
        await sleep(100);
      }
    };
    /** The monitor's runs once none is running (a tick only queues them). */
    const endedRuns = async (key: string, id: string): Promise<Json[]> => {
      const end = Date.now() + 60_000;
      for (;;) {
        const list = await runs(key, id);
        if (list.every((r) => r.status !== 'running')) return list;
        assert.ok(Date.now() < end, 'the runs ended in time');
        await sleep(100);
      }
    };
    const options = { width: WIDTH, height: HEIGHT };
    /** A stored file's key (`{token}.{ext}`) from its hosted URL. */
    const fileOf = (url: unknown) => String(url).slice(String(url).lastIndexOf('/') + 1);
    /** Waits until `check` holds (files are deleted right after the answer, off the request). */
    const eventually = async (check: () => Promise<boolean>, what: string) => {
      const end = Date.now() + 30_000;
      while (!(await check())) {
        assert.ok(Date.now() < end, what);
        await sleep(50);
      }
    };
    const stored = async (url: unknown) => (await t.deps.storage.get(fileOf(url))) !== null;

    it('is Pro: Free is refused as other Pro features are', async () => {
      const plans = (await (await t.fetch('/v1/plans')).json()) as { data: Json[] };
      const limits = (name: string) => {
        const plan = plans.data.find((p) => p.name === name);
        return [plan?.max_monitors, plan?.min_monitor_interval];
      };
      assert.deepEqual(limits('free'), [0, 15]);
      assert.deepEqual(limits('pro'), [3, 15], 'GET /v1/plans lists the plan data');
      const free = await account(t, { key: true });
      const res = await api(free.key, '/v1/monitors', {
        method: 'POST',
        json: { url: `${site.origin}/static`, every: '1h' },
      });
      assert.equal(res.status, 400);
      const body = (await res.json()) as Json;
      assert.equal(body.code, 'plan_restriction');
      assert.match(
        String(body.error ?? body.message),
        /monitors is not available on the free plan/,
      );
    });

    it('creates a monitor, refusing bad fields by name', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, {
        name: 'home',
        url: `${site.origin}/static`,
        options,
        every: '1h',
        webhook_url: hooks.url,
      });
      assert.match(String(m.id), /^mon_[0-9A-Za-z]{24}$/);
      assert.equal(m.status, 'active');
      assert.equal(m.threshold, 0.001);
      assert.deepEqual(m.options, options);
      assert.deepEqual(m.ignore_selectors, []);
      const next = Date.parse(String(m.next_run_at));
      assert.ok(next > clock());
      assert.ok(next % (60 * MINUTE_MS) < MINUTE_MS, 'within the first minute of its slot');
      const got = (await (await api(p.key, `/v1/monitors/${m.id}`)).json()) as Json;
      assert.deepEqual(got, m);
      const list = (await (await api(p.key, '/v1/monitors')).json()) as { data: Json[] };
      assert.deepEqual(
        list.data.map((x) => x.id),
        [m.id],
      );

      const refused = async (body: Json, pattern: RegExp) => {
        const res = await api(p.key, '/v1/monitors', { method: 'POST', json: body });
        assert.equal(res.status, 400, JSON.stringify(body));
        const text = await res.text();
        assert.match(text, pattern, text);
      };
      const url = `${site.origin}/static`;
      await refused({ url, every: '5m' }, /every/);
      await refused({ url, every: '1h', threshold: 0 }, /threshold/);
      await refused({ url, every: '1h', options: { full_page: 'yes' } }, /options\.full_page/);
      await refused({ url, every: '1h', name: 'x'.repeat(201) }, /name/);
      await refused({ url, every: '1h', options: { async: true } }, /options\.async/);
      await refused(
        { url, every: '1h', options: { response_type: 'image' } },
        /options\.response_type/,
      );
      await refused({ url, every: '1h', options: { width: 'wide' } }, /options\.width/);
      await refused({ url, every: '1h', options: { format: 'pdf' } }, /options\.format/);
      await refused({ url, every: '1h', webhook_url: 'http://10.0.0.1/x' }, /webhook_url/);
      await refused({ every: '1h' }, /url/);
      await refused(
        { url, every: '1h', ignore_selectors: Array.from({ length: 51 }, (_, i) => `#a${i}`) },
        /ignore_selectors/,
      );
      const strict = await startApp({ db, plans: { pro: { min_monitor_interval: 60 } } });
      try {
        const k = await account(strict, { plan: 'pro', key: true });
        const res = await strict.fetch('/v1/monitors', {
          method: 'POST',
          headers: { 'x-api-key': k.key },
          json: { url: 'https://example.com/', every: '15m' },
        });
        assert.equal(res.status, 400);
        assert.match(await res.text(), /every: .*60 minutes/);
      } finally {
        await strict.close();
      }
      // max_monitors (3 here): the fourth is refused.
      await create(p.key, { url, every: '1d' });
      await create(p.key, { url, every: '7d' });
      await refused({ url, every: '1d' }, /max_monitors/);
    });

    it('runs: unchanged, then a recoloured area changed, with a diff and a signed event', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      box.colour = 'rgb(0, 0, 255)';
      const m = await create(p.key, {
        url: `${site.origin}/box`,
        options,
        every: '1h',
        webhook_url: hooks.url,
      });
      const id = String(m.id);
      const first = await runNow(p.key, id);
      assert.equal(first.status, 'succeeded', JSON.stringify(first));
      assert.equal(first.changed, false);
      assert.equal((await fetch(String(first.image_url))).status, 200);
      assert.equal(await usage(p.key), 1, 'one unit a run');

      const same = await runNow(p.key, id);
      assert.equal(same.changed, false, JSON.stringify(same));
      assert.equal(same.changed_fraction, 0);
      assert.equal(same.diff_url, undefined);
      assert.equal(await usage(p.key), 2);

      const before = hooks.received.length;
      box.colour = 'rgb(0, 160, 0)';
      const changed = await runNow(p.key, id);
      assert.equal(changed.changed, true, JSON.stringify(changed));
      const fraction = Number(changed.changed_fraction);
      assert.ok(Math.abs(fraction - 0.25) < 0.01, `about a quarter changed: ${fraction}`);
      const diff = await fetch(String(changed.diff_url));
      assert.equal(diff.status, 200);
      assert.equal(diff.headers.get('content-type'), 'image/png');
      const listed = await runs(p.key, id);
      assert.deepEqual(
        listed.map((r) => r.id),
        [changed.id, same.id, first.id],
        'newest first',
      );
      const monitor = (await (await api(p.key, `/v1/monitors/${id}`)).json()) as Json;
      assert.ok(monitor.last_change_at !== null);

      const hook = (await hooks.waitFor(before + 1)).at(-1);
      assert.ok(hook);
      const { secret } = (await (
        await t.fetch('/v1/webhooks/secret', { cookie: p.cookie })
      ).json()) as {
        secret: string;
      };
      const event = new Webhook(secret).verify(hook.body, {
        'webhook-id': String(hook.headers['webhook-id']),
        'webhook-timestamp': String(hook.headers['webhook-timestamp']),
        'webhook-signature': String(hook.headers['webhook-signature']),
      }) as Json;
      assert.equal(event.type, 'monitor.changed');
      const data = event.data as Json;
      assert.equal(data.monitor_id, id);
      assert.equal(data.run_id, changed.id);
      assert.equal(data.changed_fraction, fraction);
      assert.equal(data.image_url, changed.image_url);
      assert.equal(data.previous_image_url, same.image_url);
      assert.equal(data.diff_url, changed.diff_url);

      // The baseline outlives the retention sweep; runs before it follow the plan's retention.
      // (Pro keeps images an hour here.) The clock moves little: the renderer's deadlines are
      // timers, and a timer cannot wait a month.
      offset += 2 * 60 * MINUTE_MS;
      await t.deps.sweep();
      assert.equal((await fetch(String(changed.image_url))).status, 200, 'the baseline is kept');
      assert.equal((await fetch(String(first.image_url))).status, 404, 'an older run is swept');
    });

    it('ignore_selectors hides a changing element: unchanged', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, {
        url: `${site.origin}/clock`,
        options,
        every: '1h',
        ignore_selectors: ['#clock'],
      });
      await runNow(p.key, String(m.id));
      const second = await runNow(p.key, String(m.id));
      assert.equal(second.status, 'succeeded');
      assert.equal(second.changed, false, JSON.stringify(second));
      // The same page without ignore_selectors does change.
      const plain = await create(p.key, { url: `${site.origin}/clock`, options, every: '1h' });
      await runNow(p.key, String(plain.id));
      const moved = await runNow(p.key, String(plain.id));
      assert.equal(moved.changed, true, JSON.stringify(moved));
    });

    it('pauses, resumes, deletes; another account sees 404', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const other = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, every: '15m' });
      const id = String(m.id);
      for (const [method, path] of [
        ['GET', `/v1/monitors/${id}`],
        ['PATCH', `/v1/monitors/${id}`],
        ['DELETE', `/v1/monitors/${id}`],
        ['POST', `/v1/monitors/${id}/run`],
        ['GET', `/v1/monitors/${id}/runs`],
      ] as const) {
        const res = await api(other.key, path, {
          method,
          ...(method === 'PATCH' ? { json: { status: 'paused' } } : {}),
        });
        assert.equal(res.status, 404, `${method} ${path}`);
      }
      const patch = async (json: Json) => {
        const res = await api(p.key, `/v1/monitors/${id}`, { method: 'PATCH', json });
        assert.equal(res.status, 200, await res.clone().text());
        return (await res.json()) as Json;
      };
      assert.equal((await patch({ status: 'paused' })).status, 'paused');
      offset += 60 * MINUTE_MS;
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, id)).length, 0, 'a paused monitor does not run');
      const resumed = await patch({ status: 'active', every: '1h', threshold: 0.5, name: 'n' });
      assert.equal(resumed.status, 'active');
      assert.equal(resumed.every, '1h');
      assert.equal(resumed.threshold, 0.5);
      assert.ok(Date.parse(String(resumed.next_run_at)) > clock());
      const del = await api(p.key, `/v1/monitors/${id}`, { method: 'DELETE' });
      assert.equal(del.status, 200);
      assert.equal((await api(p.key, `/v1/monitors/${id}`)).status, 404);
    });

    it("deleting it deletes its images at once: each run's, the diff, the baseline", async () => {
      const p = await account(t, { plan: 'pro', key: true });
      box.colour = 'rgb(0, 0, 255)';
      const m = await create(p.key, { url: `${site.origin}/box`, options, every: '1h' });
      const id = String(m.id);
      const first = await runNow(p.key, id);
      box.colour = 'rgb(0, 160, 0)';
      const second = await runNow(p.key, id);
      assert.equal(second.changed, true, JSON.stringify(second));
      // The second run's image is the baseline now; the first's is an older run's.
      const urls = [first.image_url, second.image_url, second.diff_url].map(String);
      for (const url of urls) assert.equal((await fetch(url)).status, 200, url);

      // A capture of the account's with the run's options renders its own image: runs are
      // cached apart, so the monitor's deletion cannot take an image the account was given.
      const capture = await api(p.key, '/v1/screenshots', {
        method: 'POST',
        json: { url: `${site.origin}/box`, ...options },
      });
      assert.equal(capture.status, 201, await capture.clone().text());
      const captured = (await capture.json()) as Json;
      assert.equal(captured.cached, false, 'not a run of the monitor from the cache');
      assert.ok(!urls.includes(String(captured.image_url)));

      const del = await api(p.key, `/v1/monitors/${id}`, { method: 'DELETE' });
      assert.equal(del.status, 200, await del.clone().text());
      for (const url of urls) assert.equal((await fetch(url)).status, 404, `${url} at once`);
      await eventually(
        async () => !(await Promise.all(urls.map(stored))).some(Boolean),
        'the stored files are deleted too',
      );
      assert.equal((await fetch(String(captured.image_url))).status, 200, 'the capture stays');
      const left = await t.deps.database.db
        .selectFrom('screenshots')
        .select('token')
        .where('user_id', '=', p.id)
        .execute();
      assert.deepEqual(
        left.map((r) => r.token),
        [fileOf(captured.image_url).split('.')[0]],
        'no record of the monitor is left',
      );
    });

    it('a file that cannot be deleted is logged, 404 anyway, and the orphan sweep takes it', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, options, every: '1h' });
      const run = await runNow(p.key, String(m.id));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      const storage = t.deps.storage;
      const { delete: deleteFile } = storage;
      const refused: string[] = [];
      storage.delete = async (key) => {
        refused.push(key);
        throw new Error('the store is away');
      };
      try {
        const del = await api(p.key, `/v1/monitors/${m.id}`, { method: 'DELETE' });
        assert.equal(del.status, 200, await del.clone().text());
        assert.equal((await fetch(String(run.image_url))).status, 404, 'the record decides');
        await eventually(async () => refused.includes(fileOf(run.image_url)), 'it was tried');
      } finally {
        storage.delete = deleteFile;
      }
      assert.ok(await stored(run.image_url), 'the file is still there');
      assert.ok(
        t.logs.some((l) => l.includes('could not delete a monitor image')),
        'and the failure was logged',
      );
      // The orphan sweep deletes stored images no record points to, once old enough.
      offset += 2 * 60 * MINUTE_MS;
      await t.deps.sweepOrphans();
      assert.equal(await stored(run.image_url), false, 'the orphan sweep deleted it');
    });

    it('a run whose monitor is deleted while it renders leaves no image behind', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/slow`, options, every: '1h' });
      slowAsked = Promise.withResolvers<void>();
      slowGate = Promise.withResolvers<void>();
      try {
        const res = await api(p.key, `/v1/monitors/${m.id}/run`, { method: 'POST' });
        assert.equal(res.status, 202);
        await slowAsked.promise; // rendering: past the worker's look for its monitor
        const del = await api(p.key, `/v1/monitors/${m.id}`, { method: 'DELETE' });
        assert.equal(del.status, 200);
      } finally {
        slowGate.resolve();
      }
      const [job] = await endedJobs(p.id);
      assert.equal(job?.status, 'succeeded', JSON.stringify(job));
      const result = JSON.parse(String(job?.result)) as Json;
      const url = String(result.image_url);
      assert.match(url, /\/images\//);
      assert.equal((await fetch(url)).status, 404, 'the image it stored is not online');
      assert.equal(await stored(url), false, 'nor stored');
      const left = await t.deps.database.db
        .selectFrom('screenshots')
        .select('id')
        .where('user_id', '=', p.id)
        .execute();
      assert.deepEqual(left, [], 'nor recorded');
    });

    it('answers an html monitor with its size and digest, never its document', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const doc = `<body style="margin:0;background:#036"><h1 style="color:#fff">prix: 5 €</h1>${'<!-- pad -->'.repeat(2_000)}</body>`;
      const digest = {
        html_bytes: Buffer.byteLength(doc),
        html_sha256: createHash('sha256').update(doc).digest('hex'),
      };
      const m = await create(p.key, { html: doc, options, every: '1h', name: 'doc' });
      const shape = (x: Json) => ({
        html: x.html,
        url: x.url,
        html_bytes: x.html_bytes,
        html_sha256: x.html_sha256,
      });
      const expected = { html: undefined, url: undefined, ...digest };
      assert.deepEqual(shape(m), expected, 'the create answer');
      const id = String(m.id);
      const got = (await (await api(p.key, `/v1/monitors/${id}`)).json()) as Json;
      assert.deepEqual(shape(got), expected, 'GET');
      const list = (await (await api(p.key, '/v1/monitors')).json()) as { data: Json[] };
      assert.deepEqual(list.data.map(shape), [expected], 'the list');
      const patched = await api(p.key, `/v1/monitors/${id}`, {
        method: 'PATCH',
        json: { name: 'renamed' },
      });
      assert.deepEqual(shape((await patched.json()) as Json), expected, 'PATCH');
      assert.ok(Buffer.byteLength(JSON.stringify(list)) < 2_000, 'a list stays small');
      // The document itself is kept: a run renders it.
      const run = await runNow(p.key, id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      // A monitor stored before the digest was kept is answered the same (worked out).
      const row = await t.deps.database.db
        .selectFrom('monitors')
        .select('input')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      const { htmlDigest: kept, ...older } = JSON.parse(row.input) as Json;
      assert.deepEqual(kept, { bytes: digest.html_bytes, sha256: digest.html_sha256 }, 'kept');
      await t.deps.database.db
        .updateTable('monitors')
        .set({ input: JSON.stringify(older) })
        .where('id', '=', id)
        .execute();
      const again = (await (await api(p.key, `/v1/monitors/${id}`)).json()) as Json;
      assert.deepEqual(shape(again), expected, 'an older monitor');
    });

    it('monitor.failed after 3 failed runs in a row, then not again that day', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, {
        url: `${site.origin}/broken`,
        options: { ...options, fail_on_http_error: true },
        every: '1h',
        webhook_url: hooks.url,
      });
      const failedEvents = () =>
        hooks.received.filter(
          (h) => h.body.includes('"monitor.failed"') && h.body.includes(String(m.id)),
        );
      for (let i = 0; i < 2; i++) {
        const run = await runNow(p.key, String(m.id));
        assert.equal(run.status, 'failed', JSON.stringify(run));
        assert.ok(run.error);
      }
      assert.equal(await usage(p.key), 0, 'a failed run gives its unit back');
      await runNow(p.key, String(m.id));
      const end = Date.now() + 30_000;
      while (failedEvents().length < 1) {
        assert.ok(Date.now() < end, 'monitor.failed was delivered');
        await sleep(50);
      }
      const data = (JSON.parse(failedEvents()[0]?.body ?? '{}') as { data: Json }).data;
      assert.equal(data.monitor_id, m.id);
      assert.equal(data.failures, 3);
      await runNow(p.key, String(m.id));
      await sleep(1_000);
      assert.equal(failedEvents().length, 1, 'at most once a day while failing');
    });

    it('keeps credentials for the target encrypted, and sends them', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, {
        url: `${site.origin}/token`,
        options: { ...options, headers: { 'X-Token': 'hunter2-monitor' } },
        every: '1h',
      });
      assert.ok(!JSON.stringify(m).includes('hunter2-monitor'), 'not answered');
      const rows = await t.deps.database.db
        .selectFrom('monitors')
        .select('input')
        .where('id', '=', String(m.id))
        .execute();
      assert.ok(!String(rows[0]?.input).includes('hunter2'), 'not stored in the clear');
      const run = await runNow(p.key, String(m.id));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.ok(tokens.includes('hunter2-monitor'), 'the run sent the header');
    });

    it('an account that left Pro has its monitors paused, charged nothing', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, options, every: '1h' });
      await t.deps.ctx.store.users.setPlan(p.id, 'free', clock());
      const run = await runNow(p.key, String(m.id));
      assert.equal(run.status, 'failed');
      assert.match(String(run.error), /not available on the free plan/);
      assert.equal(await usage(p.key), 0);
      const monitor = (await (await api(p.key, `/v1/monitors/${m.id}`)).json()) as Json;
      assert.equal(monitor.status, 'paused');
    });

    it('a spent month pauses the monitor (paused_quota), charging nothing', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, options, every: '1h' });
      const now = clock();
      for (let i = 0; i < QUOTA; i++) {
        await t.deps.ctx.store.quota.reserve(
          { userId: p.id, period: monthBounds(now).key, day: dayBounds(now).key },
          { limit: QUOTA },
        );
      }
      const run = await runNow(p.key, String(m.id));
      assert.equal(run.status, 'failed');
      assert.match(String(run.error), /quota/);
      assert.equal(await usage(p.key), QUOTA);
      const monitor = (await (await api(p.key, `/v1/monitors/${m.id}`)).json()) as Json;
      assert.equal(monitor.status, 'paused_quota');

      // Its slots this month find the month spent: nothing recorded, nothing charged.
      offset += Date.parse(String(monitor.next_run_at)) - clock() + 1;
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, String(m.id))).length, 1, 'no run while the month is spent');
      const still = (await (await api(p.key, `/v1/monitors/${m.id}`)).json()) as Json;
      assert.equal(still.status, 'paused_quota');
      assert.ok(Date.parse(String(still.next_run_at)) > clock(), 'the slot moved on');

      // The first slot of the next month resumes it.
      offset += monthBounds(clock()).end - clock() + 2 * 60 * MINUTE_MS;
      await t.deps.runMonitors();
      const [resumedRun] = await endedRuns(p.key, String(m.id));
      assert.equal(resumedRun?.status, 'succeeded', JSON.stringify(resumedRun));
      const resumed = (await (await api(p.key, `/v1/monitors/${m.id}`)).json()) as Json;
      assert.equal(resumed.status, 'active');
      assert.equal(await usage(p.key), 1, 'one unit of the new month');
    });

    it("runs on the job queue, apart from the account's max_queued_jobs", async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, options, every: '1h' });
      const run = await runNow(p.key, String(m.id));
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      // The worker ends the run, then its job: the job's row may lag the run by a moment.
      const jobs = await endedJobs(p.id, 30_000);
      assert.deepEqual(
        jobs.map(({ status, monitor_run_id, key_id }) => ({ status, monitor_run_id, key_id })),
        [{ status: 'succeeded', monitor_run_id: run.id, key_id: null }],
      );
      // One run of a monitor at a time: a run now while one is queued or rendering is a 409.
      const first = await api(p.key, `/v1/monitors/${m.id}/run`, { method: 'POST' });
      assert.equal(first.status, 202);
      const again = await api(p.key, `/v1/monitors/${m.id}/run`, { method: 'POST' });
      assert.equal(again.status, 409, await again.clone().text());
      assert.match(((await again.json()) as Json).error as string, /already queued or rendering/);
      // Runs queued (max_queued_jobs is 1 here) leave the account its own async capture.
      const other = await create(p.key, { url: `${site.origin}/static`, options, every: '1h' });
      const second = await api(p.key, `/v1/monitors/${other.id}/run`, { method: 'POST' });
      assert.equal(second.status, 202);
      const queued = await api(p.key, '/v1/screenshots', {
        method: 'POST',
        json: { url: `${site.origin}/static`, async: true },
      });
      assert.equal(queued.status, 202, await queued.text());
      await endedRuns(p.key, String(m.id));
      await endedRuns(p.key, String(other.id));
    });

    it('a run whose monitor is deleted while it waits renders nothing, its unit back', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/token`, options, every: '1h' });
      // Held in the queue: a synchronous render in flight makes queued work wait its turn
      // (BOUNDS.jobs.foregroundQuietMs), long enough to delete the monitor meanwhile.
      const leave = t.deps.capture.foreground.enter();
      const before = tokens.length;
      try {
        const res = await api(p.key, `/v1/monitors/${m.id}/run`, { method: 'POST' });
        assert.equal(res.status, 202);
        assert.equal(await usage(p.key), 1, 'the run holds its unit');
        assert.equal((await api(p.key, `/v1/monitors/${m.id}`, { method: 'DELETE' })).status, 200);
      } finally {
        leave();
      }
      const [job] = await endedJobs(p.id, 30_000);
      assert.equal(job?.status, 'failed', JSON.stringify(job));
      assert.match(String(job?.error), /the monitor was deleted/);
      assert.equal(await usage(p.key), 0, 'its unit came back');
      assert.equal(tokens.length, before, 'the page was never loaded');
    });

    it('runs each due slot once, and a long gap once', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const m = await create(p.key, { url: `${site.origin}/static`, options, every: '15m' });
      const id = String(m.id);
      const due = Date.parse(String(m.next_run_at));
      assert.ok(due % (15 * MINUTE_MS) < MINUTE_MS);
      // Other tests' monitors may be due too: count this one's runs.
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, id)).length, 0, 'not due yet');
      offset += due - clock() + 1;
      await Promise.all([t.deps.runMonitors(), t.deps.runMonitors()]);
      assert.equal((await runs(p.key, id)).length, 1, 'two ticks at once: one run');
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, id)).length, 1, 'the slot ran already');
      const after = (await (await api(p.key, `/v1/monitors/${id}`)).json()) as Json;
      const next = Date.parse(String(after.next_run_at));
      assert.equal(next - due, 15 * MINUTE_MS, 'the next slot, at the same offset');
      // A slot that finds the last run still queued or rendering records nothing.
      await endedRuns(p.key, id);
      offset += next - clock() + 1;
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, id)).length, 2);
      // Ten days with no node up: one run, not one per missed slot.
      await endedRuns(p.key, id);
      offset += 10 * 24 * 60 * MINUTE_MS;
      await t.deps.runMonitors();
      await t.deps.runMonitors();
      assert.equal((await runs(p.key, id)).length, 3);
      const latest = (await endedRuns(p.key, id))[0];
      assert.equal(latest?.status, 'succeeded', JSON.stringify(latest));
      // A run whose node stopped mid-run is ended as failed by a later tick.
      await t.deps.ctx.store.monitors.insertRun({ id: 'run_stale', monitorId: id, at: clock() });
      offset += 30 * MINUTE_MS;
      await t.deps.runMonitors();
      const stale = (await runs(p.key, id)).find((r) => r.id === 'run_stale');
      assert.equal(stale?.status, 'failed');
      assert.match(String(stale?.error), /interrupted/);
    });
  });

// The images of a monitor stored in S3-compatible storage (s3rver) go with it just the same:
// its records at once, then its objects in the bucket.
describe('monitors on S3: deleting one deletes its objects', () => {
  let t: TestApp;
  let site: FixtureSite;
  let s3: S3Process;
  const box = new ColourBox();
  before(async () => {
    site = await startSite({ '/box': box.handler });
    s3 = await startS3Process();
    t = await startApp({ db: 'sqlite', env: { ...s3.env, EGRESS_ALLOWLIST: site.hostPort } });
  });
  after(async () => {
    await t?.close();
    await s3?.close();
    await site?.close();
  });

  it("each run's image, the diff and the baseline: 404 at once, then gone from the bucket", async () => {
    assert.equal(t.deps.storage.kind, 's3');
    const { key } = await account(t, { plan: 'pro', key: true });
    const api = (path: string, init: { method?: string; json?: unknown } = {}) =>
      t.fetch(path, { ...init, headers: { 'x-api-key': key } });
    const created = await api('/v1/monitors', {
      method: 'POST',
      json: { url: `${site.origin}/box`, options: { width: WIDTH, height: HEIGHT }, every: '1h' },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const { id } = (await created.json()) as { id: string };
    const runNow = async (): Promise<Json> => {
      const res = await api(`/v1/monitors/${id}/run`, { method: 'POST' });
      assert.equal(res.status, 202, await res.clone().text());
      const { id: runId } = (await res.json()) as { id: string };
      const end = Date.now() + 60_000;
      for (;;) {
        const list = (await (await api(`/v1/monitors/${id}/runs`)).json()) as { data: Json[] };
        const run = list.data.find((r) => r.id === runId);
        if (run && run.status !== 'running') return run;
        assert.ok(Date.now() < end, 'the run ended in time');
        await sleep(100);
      }
    };
    const first = await runNow();
    box.colour = 'rgb(0, 160, 0)';
    const second = await runNow();
    assert.equal(second.changed, true, JSON.stringify(second));
    const urls = [first.image_url, second.image_url, second.diff_url].map(String);
    const keys = urls.map((u) => u.slice(u.lastIndexOf('/') + 1));
    for (const url of urls) assert.equal((await fetch(url)).status, 200, url);
    for (const k of keys) assert.ok(await t.deps.storage.get(k), `${k} is in the bucket`);

    assert.equal((await api(`/v1/monitors/${id}`, { method: 'DELETE' })).status, 200);
    for (const url of urls) assert.equal((await fetch(url)).status, 404, `${url} at once`);
    const end = Date.now() + 30_000;
    for (;;) {
      const left = (await Promise.all(keys.map((k) => t.deps.storage.get(k)))).filter(Boolean);
      if (left.length === 0) break;
      assert.ok(Date.now() < end, `${left.length} objects still in the bucket`);
      await sleep(50);
    }
  });
});
