/**
 * Batches of async captures (docs/api.md, "Batches") through the real HTTP surface, real
 * workers and a webhook receiver on loopback, on SQLite, PostgreSQL and PostgreSQL with Redis
 * (BullMQ): every job's own event and one `batch.completed` with the counts, each signature
 * checked by the `standardwebhooks` package; a failed target counted as failed; a bad
 * request refusing the whole batch with nothing queued or held; the plan, the size bounds,
 * the quota; GET of the batch, and another account's 404.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { account } from '../helpers/accounts.ts';
import { type DbKind, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { serviceSkip, TEST_REDIS_URL } from '../helpers/services.ts';
import {
  type ReceivedWebhook,
  startWebhookReceiver,
  type WebhookReceiver,
} from '../helpers/webhooks.ts';

type Json = Record<string, unknown>;

const VARIANTS: Array<{ name: string; db: DbKind; redis: boolean }> = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  { name: 'postgres', db: 'postgres', redis: false },
  { name: 'postgres + redis', db: 'postgres', redis: true },
];

/** Pro's monthly quota here. */
const QUOTA = 20;
/** Pro's bound of open async jobs here: small enough for two batches to pass it. */
const MAX_OPEN = 5;

for (const variant of VARIANTS) {
  describe(`batches [${variant.name}]`, async () => {
    const skip =
      (variant.db === 'postgres' && (await serviceSkip('postgres'))) ||
      (variant.redis && (await serviceSkip('redis')));
    if (skip) {
      describe('skipped', { skip }, () => {});
      return;
    }
    let t: TestApp;
    let site: FixtureSite;
    let hooks: WebhookReceiver;
    // The /hold page's requests, answered by release().
    const held: Array<() => void> = [];
    const release = () => {
      for (const answer of held.splice(0)) answer();
    };

    before(async () => {
      hooks = await startWebhookReceiver();
      site = await startSite({
        '/': page('<h1>batch</h1>'),
        '/hold': (_req, res) =>
          new Promise<void>((resolve) => {
            held.push(() => {
              res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>held</p>'));
              resolve();
            });
          }),
      });
      t = await startApp({
        db: variant.db,
        env: {
          EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
          ...(variant.redis
            ? {
                REDIS_URL: TEST_REDIS_URL,
                REDIS_PREFIX: `batch-${randomBytes(4).toString('hex')}:`,
              }
            : {}),
        },
        plans: { pro: { monthly_quota: QUOTA, max_queued_jobs: MAX_OPEN } },
        webhookBackoffMs: [200, 200, 200],
      });
    });
    after(async () => {
      release();
      await t?.close();
      await site?.close();
      await hooks?.close();
    });

    const postBatch = (key: string, body: unknown) =>
      t.fetch('/v1/screenshots/batch', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: body,
      });
    const capture = (path: string, extra: Json = {}) => ({
      url: `${site.origin}${path}`,
      width: 320,
      height: 200,
      ...extra,
    });
    const usage = async (key: string) =>
      ((await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as Json).used;
    const secretOf = async (cookie: string) =>
      ((await (await t.fetch('/v1/webhooks/secret', { cookie })).json()) as { secret: string })
        .secret;
    const getBatch = (key: string, id: string) =>
      t.fetch(`/v1/screenshots/batch/${id}`, { headers: { 'x-api-key': key } });

    /** This batch's events, once `n` have come (other tests' events are left out). */
    async function eventsOf(batchId: string, jobIds: string[], n: number) {
      const ours = (h: ReceivedWebhook) => {
        const data = (JSON.parse(h.body) as { data: Json }).data;
        return data.batch_id === batchId || jobIds.includes(String(data.id));
      };
      const end = Date.now() + 90_000;
      while (hooks.received.filter(ours).length < n) {
        if (Date.now() > end) throw new Error(`waited for ${n} events of ${batchId}`);
        await sleep(50);
      }
      return hooks.received.filter(ours);
    }

    /** Every event verified by the standardwebhooks package with the account's secret. */
    function verifyAll(secret: string, got: ReceivedWebhook[]): Json[] {
      return got.map(
        (h) =>
          new Webhook(secret).verify(h.body, {
            'webhook-id': String(h.headers['webhook-id']),
            'webhook-timestamp': String(h.headers['webhook-timestamp']),
            'webhook-signature': String(h.headers['webhook-signature']),
          }) as Json,
      );
    }

    async function waitForBatch(key: string, id: string): Promise<Json> {
      const end = Date.now() + 90_000;
      for (;;) {
        const res = await getBatch(key, id);
        assert.equal(res.status, 200, await res.clone().text());
        const body = (await res.json()) as Json;
        if (body.status === 'completed') return body;
        if (Date.now() > end) throw new Error(`batch still running: ${JSON.stringify(body)}`);
        await sleep(100);
      }
    }

    it('queues three captures: three signed screenshot events, then batch.completed', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      hooks.answer(200);
      const res = await postBatch(p.key, {
        requests: [capture('/?1'), capture('/?2', { async: true }), capture('/?3')],
        webhook_url: hooks.url,
      });
      assert.equal(res.status, 202, await res.clone().text());
      const queued = (await res.json()) as { batch_id: string; status_url: string; jobs: Json[] };
      assert.match(queued.batch_id, /^bat_[0-9A-Za-z]{24}$/);
      assert.equal(queued.status_url, `${t.url}/v1/screenshots/batch/${queued.batch_id}`);
      assert.equal(res.headers.get('location'), queued.status_url);
      assert.equal(queued.jobs.length, 3);
      for (const job of queued.jobs) {
        assert.deepEqual(Object.keys(job).sort(), ['id', 'status', 'status_url']);
        assert.match(String(job.id), /^job_[0-9A-Za-z]{24}$/);
        assert.equal(job.status, 'queued');
        assert.equal(job.status_url, `${t.url}/v1/screenshots/${String(job.id)}`);
      }
      // Each request holds its own unit from the moment it is queued.
      assert.equal(await usage(p.key), 3);

      const jobIds = queued.jobs.map((j) => String(j.id));
      const got = await eventsOf(queued.batch_id, jobIds, 4);
      const events = verifyAll(await secretOf(p.cookie), got);
      const shots = events.filter((e) => e.type === 'screenshot.succeeded');
      assert.deepEqual(
        shots.map((e) => (e.data as Json).id).sort(),
        [...jobIds].sort(),
        'one screenshot.succeeded per job',
      );
      for (const e of shots) assert.equal((e.data as Json).batch_id, queued.batch_id);
      const completed = events.filter((e) => e.type === 'batch.completed');
      assert.equal(completed.length, 1);
      assert.deepEqual(completed[0]?.data, {
        batch_id: queued.batch_id,
        succeeded: 3,
        failed: 0,
      });
      assert.equal(new Set(got.map((h) => h.headers['webhook-id'])).size, 4);
      // Once, however long we wait.
      await sleep(500);
      assert.equal((await eventsOf(queued.batch_id, jobIds, 4)).length, 4);

      const batch = await waitForBatch(p.key, queued.batch_id);
      assert.deepEqual(
        [batch.status, batch.total, batch.queued, batch.rendering, batch.succeeded, batch.failed],
        ['completed', 3, 0, 0, 3, 0],
      );
      assert.ok(!Number.isNaN(Date.parse(String(batch.completed_at))));
      const jobs = batch.jobs as Json[];
      assert.deepEqual(
        jobs.map((j) => j.id),
        jobIds,
        "the jobs in the requests' order",
      );
      for (const job of jobs) {
        assert.equal(job.status, 'succeeded');
        assert.equal(job.batch_id, queued.batch_id);
        assert.match(String(job.image_url), /\/images\/[A-Za-z0-9_-]{22}\.png$/);
        assert.deepEqual([job.width, job.height], [320, 200]);
        // The same answer as the job's own status URL.
        const own = await t.fetch(`/v1/screenshots/${String(job.id)}`, {
          headers: { 'x-api-key': p.key },
        });
        assert.deepEqual(await own.json(), job);
      }
      assert.equal(await usage(p.key), 3, 'succeeded jobs keep their units');

      // Another account sees no such batch, exactly as for an unknown id.
      const other = await account(t, { plan: 'pro', key: true });
      const foreign = await getBatch(other.key, queued.batch_id);
      assert.deepEqual([foreign.status, await foreign.json()], [404, { error: 'batch not found' }]);
      const unknown = await getBatch(p.key, `bat_${'x'.repeat(24)}`);
      assert.deepEqual([unknown.status, await unknown.json()], [404, { error: 'batch not found' }]);
      const malformed = await getBatch(p.key, 'nope');
      assert.equal(malformed.status, 404);
      // A key is required.
      assert.equal((await t.fetch(`/v1/screenshots/batch/${queued.batch_id}`)).status, 401);
    });

    it('counts a failed target as failed and gives its unit back', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      hooks.answer(200);
      const res = await postBatch(p.key, {
        requests: [
          capture('/?ok1'),
          capture('/missing', { fail_on_http_error: true }),
          capture('/?ok2'),
        ],
        webhook_url: hooks.url,
      });
      assert.equal(res.status, 202, await res.clone().text());
      const queued = (await res.json()) as { batch_id: string; jobs: Json[] };
      const jobIds = queued.jobs.map((j) => String(j.id));
      const events = verifyAll(
        await secretOf(p.cookie),
        await eventsOf(queued.batch_id, jobIds, 4),
      );
      const failedEvent = events.find((e) => e.type === 'screenshot.failed')?.data as Json;
      assert.equal(failedEvent.id, jobIds[1]);
      assert.equal(failedEvent.code, 'target_error');
      assert.equal(events.filter((e) => e.type === 'screenshot.succeeded').length, 2);
      assert.deepEqual(events.find((e) => e.type === 'batch.completed')?.data, {
        batch_id: queued.batch_id,
        succeeded: 2,
        failed: 1,
      });
      const batch = await waitForBatch(p.key, queued.batch_id);
      assert.deepEqual([batch.succeeded, batch.failed], [2, 1]);
      const failedJob = (batch.jobs as Json[])[1] as Json;
      assert.deepEqual([failedJob.status, failedJob.code], ['failed', 'target_error']);
      assert.match(String(failedJob.error), /404/);
      for (let i = 0; i < 50 && (await usage(p.key)) !== 2; i++) await sleep(100);
      assert.equal(await usage(p.key), 2, 'the failed job gave its unit back');
    });

    it('works without a webhook: GET shows the batch until it completes', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const res = await postBatch(p.key, { requests: [capture('/?quiet')] });
      assert.equal(res.status, 202, await res.clone().text());
      const { batch_id } = (await res.json()) as { batch_id: string };
      const batch = await waitForBatch(p.key, batch_id);
      assert.deepEqual([batch.total, batch.succeeded, batch.failed], [1, 1, 0]);
    });

    it('refuses the whole batch for one bad request, naming it; nothing is queued', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const refusal = async (body: unknown) => {
        const res = await postBatch(p.key, body);
        return [res.status, (await res.json()) as Json] as const;
      };
      const cases: Array<[Json, string]> = [
        [capture('/', { quality: 101 }), 'requests[1].quality must be <= 100'],
        [capture('/', { width: 0 }), 'requests[1].width must be >= '],
        // A plan rule, past the schema: the domain's message, named by index.
        [
          capture('/', { image_width: 5000 }),
          'requests[1].image_width may be at most 3840 on the pro plan',
        ],
        [
          capture('/', { format: 'pdf', image_width: 100 }),
          'requests[1].image_width is not allowed with format pdf',
        ],
        [{ width: 320 }, 'requests[1]: one of url, html or markdown is required'],
        [capture('/', { nope: 1 }), 'unknown field "requests[1].nope"'],
        [capture('/', { format: 'bmp' }), 'requests[1].format must be one of '],
        [capture('/', { async: false }), 'requests[1].async: every request of a batch is async'],
        [
          capture('/', { webhook_url: hooks.url }),
          'requests[1].webhook_url: set webhook_url on the batch',
        ],
        [
          capture('/', { response_type: 'image' }),
          'requests[1].response_type: image is not allowed in a batch',
        ],
        [{ url: 'ftp://example.com/' }, 'requests[1].url must use http or https'],
      ];
      for (const [bad, message] of cases) {
        const [status, body] = await refusal({
          requests: [capture('/?a'), bad, capture('/?c')],
          webhook_url: hooks.url,
        });
        assert.equal(status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(body)}`);
        assert.ok(
          String(body.error).startsWith(message),
          `${JSON.stringify(bad)}: ${String(body.error)}`,
        );
      }
      const [s1, b1] = await refusal({
        requests: [capture('/')],
        webhook_url: 'http://10.0.0.1/hook',
      });
      assert.deepEqual([s1, b1.code], [400, 'url_not_allowed']);
      assert.match(String(b1.error), /^webhook_url/);
      const [s2, b2] = await refusal({ requests: [] });
      assert.deepEqual([s2, b2.error], [400, 'requests must have at least 1 item']);
      const [s3, b3] = await refusal({ requests: Array.from({ length: 51 }, () => capture('/')) });
      assert.deepEqual([s3, b3.error], [400, 'requests must have at most 50 items']);
      const [s4, b4] = await refusal({ requests: [capture('/')], extra: true });
      assert.deepEqual([s4, b4.error], [400, 'unknown field "extra"']);

      // Nothing queued, nothing held.
      assert.equal(await usage(p.key), 0);
      const jobs = await t.deps.database.db
        .selectFrom('capture_jobs')
        .select('id')
        .where('user_id', '=', p.id)
        .execute();
      const batches = await t.deps.database.db
        .selectFrom('capture_batches')
        .select('id')
        .where('user_id', '=', p.id)
        .execute();
      assert.deepEqual([jobs.length, batches.length], [0, 0]);
    });

    it('refuses a batch the month cannot cover, holding nothing', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const month = new Date().toISOString().slice(0, 7);
      for (let i = 0; i < QUOTA - 2; i++)
        await t.deps.ctx.store.quota.reserve({ userId: p.id, period: month }, { limit: QUOTA });
      const res = await postBatch(p.key, {
        requests: [capture('/?q1'), capture('/?q2'), capture('/?q3')],
      });
      assert.equal(res.status, 402, await res.clone().text());
      const body = (await res.json()) as Json;
      assert.equal(body.error, 'monthly quota exceeded: the batch needs 3 units, 2 remain');
      assert.deepEqual([body.plan, body.used, body.limit], ['pro', QUOTA - 2, QUOTA]);
      assert.ok(!Number.isNaN(Date.parse(String(body.resets_at))));
      assert.equal(await usage(p.key), QUOTA - 2, 'nothing held');
    });

    it('refuses a batch the open jobs cannot take whole: 429, its units given back', async () => {
      const p = await account(t, { plan: 'pro', key: true });
      const tooBig = await postBatch(p.key, {
        requests: Array.from({ length: MAX_OPEN + 1 }, (_, i) => capture(`/?big${i}`)),
      });
      assert.equal(tooBig.status, 400);
      assert.deepEqual(await tooBig.json(), {
        error: `requests: the pro plan queues at most ${MAX_OPEN} async captures at once (max_queued_jobs); this batch has ${MAX_OPEN + 1}`,
        code: 'plan_restriction',
      });

      const first = await postBatch(p.key, {
        requests: [capture('/hold?1'), capture('/hold?2'), capture('/hold?3')],
      });
      assert.equal(first.status, 202, await first.clone().text());
      const { batch_id } = (await first.json()) as { batch_id: string };
      const second = await postBatch(p.key, {
        requests: [capture('/?s1'), capture('/?s2'), capture('/?s3')],
      });
      assert.equal(second.status, 429, await second.clone().text());
      assert.equal(second.headers.get('retry-after'), '5');
      const refused = (await second.json()) as Json;
      assert.match(
        String(refused.message),
        new RegExp(
          `^the batch's 3 jobs and the account's queued or rendering ones would pass ${MAX_OPEN}`,
        ),
      );
      assert.equal(refused.limit, MAX_OPEN);
      assert.equal(await usage(p.key), 3, 'the refused batch gave its units back');
      // The held batch finishes once its pages answer.
      for (let i = 0; i < 100 && held.length === 0; i++) await sleep(50);
      let b: Json = {};
      for (let i = 0; i < 600 && b.status !== 'completed'; i++) {
        release(); // each job's page, as its render asks for it
        b = (await (await getBatch(p.key, batch_id)).json()) as Json;
        await sleep(100);
      }
      assert.deepEqual([b.succeeded, b.failed], [3, 0]);
    });

    it('refuses Free with plan_restriction, and a body over its bound with 413', async () => {
      const free = await account(t, { key: true });
      const res = await postBatch(free.key, { requests: [capture('/')] });
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), {
        error: 'batches are not available on the free plan',
        code: 'plan_restriction',
      });
      assert.equal(await usage(free.key), 0);

      const p = await account(t, { plan: 'pro', key: true });
      const huge = await postBatch(p.key, {
        requests: [capture('/', { styles: 'x'.repeat(3_300 * 1024) })],
      });
      assert.equal(huge.status, 413);
      assert.match(String(((await huge.json()) as Json).error), /larger than 3200 KiB/);
      // Without a key: 401 before anything else.
      const anonymous = await t.fetch('/v1/screenshots/batch', {
        method: 'POST',
        json: { requests: [capture('/')] },
      });
      assert.equal(anonymous.status, 401);
    });
  });
}
