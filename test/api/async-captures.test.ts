/**
 * Async captures and webhooks (docs/api.md, "Async captures", "Webhooks") through the real
 * HTTP surface, real workers and a webhook receiver on loopback, on both databases: 202 and
 * the status URL, success and failure with the quota unit kept or given back, the Standard
 * Webhooks signature checked by the `standardwebhooks` package (an independent verifier),
 * retries with the same webhook-id, 410, refusals, bounds and accounts kept apart.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { account } from '../helpers/accounts.ts';
import { describeEachDatabase, postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver, waitForJob } from '../helpers/webhooks.ts';

type Json = Record<string, unknown>;

describeEachDatabase('async captures', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  let hooks: WebhookReceiver;
  // The /slow page's requests held open, answered by slowRelease().
  const held: Array<() => void> = [];
  const slowRelease = () => {
    for (const answer of held.splice(0)) answer();
  };
  before(async () => {
    hooks = await startWebhookReceiver();
    site = await startSite({
      '/': page('<h1>async</h1>'),
      '/broken': (_req, res) => {
        res.writeHead(500, { 'content-type': 'text/html' }).end('<h1>down</h1>');
      },
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
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}` },
      plans: { free: { rate_per_minute: 1000 }, pro: { max_queued_jobs: 2 } },
      webhookBackoffMs: [200, 200, 200],
    });
  });
  after(async () => {
    slowRelease();
    await t?.close();
    await site?.close();
    await hooks?.close();
  });

  const usage = async (key: string) =>
    ((await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as Json).used;
  const secretOf = async (cookie: string) =>
    ((await (await t.fetch('/v1/webhooks/secret', { cookie })).json()) as { secret: string })
      .secret;

  it('queues, answers 202, runs, and delivers a signed webhook with the result', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    hooks.answer(200);
    const before = hooks.received.length;
    const res = await postCapture(t, p.key, {
      url: `${site.origin}/`,
      async: true,
      webhook_url: hooks.url,
    });
    assert.equal(res.status, 202, await res.clone().text());
    const queued = (await res.json()) as Json;
    assert.deepEqual(Object.keys(queued).sort(), ['id', 'status', 'status_url']);
    assert.match(String(queued.id), /^job_[0-9A-Za-z]{24}$/);
    assert.equal(queued.status, 'queued');
    assert.equal(queued.status_url, `${t.url}/v1/screenshots/${queued.id}`);
    assert.equal(res.headers.get('location'), queued.status_url);
    // The unit is held from the moment the job is queued.
    assert.equal(await usage(p.key), 1);

    const done = await waitForJob(String(queued.status_url), p.key);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    assert.equal(done.id, queued.id);
    assert.match(String(done.image_url), /\/images\/[A-Za-z0-9_-]{22}\.png$/);
    assert.equal((await fetch(String(done.image_url))).status, 200);
    assert.deepEqual([done.width, done.height, done.format], [320, 200, 'png']);
    assert.equal(typeof done.screenshot_id, 'number');
    const rows = await t.deps.database.db
      .selectFrom('capture_jobs')
      .select('input')
      .where('id', '=', String(queued.id))
      .execute();
    assert.deepEqual(
      rows.map((r) => r.input),
      ['{}'],
      'the request is not kept past the job',
    );
    assert.equal(await usage(p.key), 1);

    const [hook] = (await hooks.waitFor(before + 1)).slice(before);
    assert.ok(hook);
    // An independent verifier: the standardwebhooks package, with the account's secret.
    const secret = await secretOf(p.cookie);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const verified = new Webhook(secret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    }) as Json;
    assert.equal(verified.type, 'screenshot.succeeded');
    assert.ok(!Number.isNaN(Date.parse(String(verified.timestamp))));
    const data = verified.data as Json;
    assert.equal(data.id, queued.id);
    assert.equal(data.status, 'succeeded');
    assert.equal(data.image_url, done.image_url);
    assert.match(String(hook.headers['webhook-id']), /^msg_[0-9A-Za-z]{24}$/);
    assert.ok(hook.body.length < 2048, 'the body is small: the image is a URL');
    // A tampered body does not verify.
    assert.throws(() =>
      new Webhook(secret).verify(hook.body.replace('succeeded', 'failed'), {
        'webhook-id': String(hook.headers['webhook-id']),
        'webhook-timestamp': String(hook.headers['webhook-timestamp']),
        'webhook-signature': String(hook.headers['webhook-signature']),
      }),
    );
    // The record is the account's, listed like any other.
    const record = await t.fetch(`/v1/screenshots/${String(done.screenshot_id)}`, {
      headers: { 'x-api-key': p.key },
    });
    assert.equal(((await record.json()) as Json).status, 'succeeded');
  });

  it('a failed capture fails the job, gives the unit back and says so in the webhook', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    hooks.answer(200);
    const before = hooks.received.length;
    const res = await postCapture(t, p.key, {
      url: `${site.origin}/broken`,
      fail_on_http_error: true,
      async: true,
      webhook_url: hooks.url,
    });
    assert.equal(res.status, 202);
    const done = await waitForJob(String(((await res.json()) as Json).status_url), p.key);
    assert.equal(done.status, 'failed');
    assert.equal(done.code, 'target_error');
    assert.match(String(done.error), /500/);
    assert.equal(done.image_url, undefined);
    // Given back (in the background, right after the failure is written).
    for (let i = 0; i < 50 && (await usage(p.key)) !== 0; i++) await sleep(100);
    assert.equal(await usage(p.key), 0);
    const [hook] = (await hooks.waitFor(before + 1)).slice(before);
    const body = JSON.parse(hook?.body ?? '{}') as Json;
    assert.equal(body.type, 'screenshot.failed');
    assert.equal((body.data as Json).code, 'target_error');
  });

  it('retries a 500 with the same webhook-id, records every attempt, and resends', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    hooks.answer(500, 503, 200);
    const before = hooks.received.length;
    const res = await postCapture(t, p.key, {
      url: `${site.origin}/?retry`,
      async: true,
      webhook_url: hooks.url,
    });
    assert.equal(res.status, 202);
    const got = (await hooks.waitFor(before + 3)).slice(before);
    const ids = new Set(got.map((h) => h.headers['webhook-id']));
    assert.equal(ids.size, 1, 'every attempt has the same webhook-id');
    const secret = await secretOf(p.cookie);
    for (const h of got) {
      new Webhook(secret).verify(h.body, {
        'webhook-id': String(h.headers['webhook-id']),
        'webhook-timestamp': String(h.headers['webhook-timestamp']),
        'webhook-signature': String(h.headers['webhook-signature']),
      });
    }
    let list: Json[] = [];
    for (let i = 0; i < 50; i++) {
      list = (
        (await (await t.fetch('/v1/webhooks/deliveries', { cookie: p.cookie })).json()) as {
          data: Json[];
        }
      ).data;
      if (list[0]?.status === 'delivered') break;
      await sleep(100);
    }
    assert.equal(list.length, 1);
    const delivery = list[0] as Json;
    assert.deepEqual(
      [delivery.status, delivery.attempts, delivery.last_status, delivery.last_error],
      ['delivered', 3, 200, null],
    );
    const attempts = (
      (await (
        await t.fetch(`/v1/webhooks/deliveries/${String(delivery.id)}/attempts`, {
          cookie: p.cookie,
        })
      ).json()) as { data: Json[] }
    ).data;
    assert.deepEqual(
      attempts.map((a) => a.status_code),
      [500, 503, 200],
    );
    assert.match(String(attempts[0]?.error), /^HTTP 500: status 500/);
    // Resend: the same webhook-id once more.
    const resent = await t.fetch(`/v1/webhooks/deliveries/${String(delivery.id)}/resend`, {
      method: 'POST',
      cookie: p.cookie,
    });
    assert.equal(resent.status, 200);
    const [again] = (await hooks.waitFor(before + 4)).slice(before + 3);
    assert.equal(again?.headers['webhook-id'], delivery.id);
    // Another account sees none of it.
    const other = await account(t, { plan: 'pro', key: true });
    const foreign = await t.fetch(`/v1/webhooks/deliveries/${String(delivery.id)}/resend`, {
      method: 'POST',
      cookie: other.cookie,
    });
    assert.equal(foreign.status, 404);
    assert.equal(
      (
        (await (await t.fetch('/v1/webhooks/deliveries', { cookie: other.cookie })).json()) as {
          data: unknown[];
        }
      ).data.length,
      0,
    );
  });

  it('stops at 410 Gone', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    hooks.answer(410);
    const before = hooks.received.length;
    await postCapture(t, p.key, {
      url: `${site.origin}/?gone`,
      async: true,
      webhook_url: hooks.url,
    });
    await hooks.waitFor(before + 1);
    await sleep(1_000); // well past the 200 ms retry wait
    assert.equal(hooks.received.length, before + 1);
    const [delivery] = (
      (await (await t.fetch('/v1/webhooks/deliveries', { cookie: p.cookie })).json()) as {
        data: Json[];
      }
    ).data;
    assert.deepEqual(
      [delivery?.status, delivery?.attempts, delivery?.last_status],
      ['gone', 1, 410],
    );
  });

  it('refuses what it cannot take: plan, webhook address, webhook without async, too many', async () => {
    const free = await account(t, { key: true });
    const refusal = async (key: string, body: Json) => {
      const res = await postCapture(t, key, body);
      return [res.status, (await res.json()) as Json] as const;
    };
    const [s1, b1] = await refusal(free.key, { url: `${site.origin}/`, async: true });
    assert.deepEqual(
      [s1, b1.code, b1.error],
      [400, 'plan_restriction', 'async is not available on the free plan'],
    );
    const p = await account(t, { plan: 'pro', key: true });
    for (const hook of [
      'http://10.0.0.1/hook',
      'http://127.0.0.1:9/hook',
      'http://[::1]/x',
      'file:///etc/passwd',
    ]) {
      const [status, body] = await refusal(p.key, {
        url: `${site.origin}/`,
        async: true,
        webhook_url: hook,
      });
      assert.equal(status, 400, hook);
      assert.equal(body.code, 'url_not_allowed', `${hook}: ${JSON.stringify(body)}`);
      assert.match(String(body.error), /^webhook_url/);
    }
    const [s2, b2] = await refusal(p.key, { url: `${site.origin}/`, webhook_url: hooks.url });
    assert.deepEqual([s2, b2.error], [400, 'webhook_url is only allowed with async: true']);
    const [s3, b3] = await refusal(p.key, {
      url: `${site.origin}/`,
      async: true,
      response_type: 'image',
    });
    assert.deepEqual([s3, b3.error], [400, 'response_type image is not allowed with async: true']);
    assert.equal(await usage(p.key), 0, 'no refusal costs a unit');

    // max_queued_jobs is 2 here: two slow jobs hold it, the third is refused until one ends.
    const slow = { url: `${site.origin}/slow`, async: true, wait_until: 'load' };
    const first = (await (await postCapture(t, p.key, slow)).json()) as Json;
    const second = (await (
      await postCapture(t, p.key, { ...slow, url: `${site.origin}/slow?2` })
    ).json()) as Json;
    const third = await postCapture(t, p.key, { ...slow, url: `${site.origin}/slow?3` });
    assert.equal(third.status, 429);
    assert.match(
      String(((await third.json()) as Json).message),
      /^2 async captures are already queued or rendering/,
    );
    assert.equal(third.headers.get('retry-after'), '5');
    assert.equal(await usage(p.key), 2, 'the refused one gave its unit back');
    // Another account's job id is not found, and reveals nothing.
    const other = await account(t, { plan: 'pro', key: true });
    const foreign = await t.fetch(`/v1/screenshots/${String(first.id)}`, {
      headers: { 'x-api-key': other.key },
    });
    assert.deepEqual(
      [foreign.status, await foreign.json()],
      [404, { error: 'screenshot not found' }],
    );
    // Both pages are being loaded by now (the limit counted them as open).
    for (let i = 0; i < 100 && held.length < 2; i++) await sleep(50);
    slowRelease();
    assert.equal((await waitForJob(String(first.status_url), p.key)).status, 'succeeded');
    assert.equal((await waitForJob(String(second.status_url), p.key)).status, 'succeeded');
  });

  it('rotates the webhook secret: later deliveries verify with the new one only', async () => {
    const p = await account(t, { plan: 'pro', key: true });
    const old = await secretOf(p.cookie);
    assert.equal(await secretOf(p.cookie), old, 'shown again, the same');
    const rotated = await t.fetch('/v1/webhooks/secret/rotate', {
      method: 'POST',
      cookie: p.cookie,
    });
    const fresh = ((await rotated.json()) as { secret: string }).secret;
    assert.notEqual(fresh, old);
    hooks.answer(200);
    const before = hooks.received.length;
    await postCapture(t, p.key, {
      url: `${site.origin}/?rotated`,
      async: true,
      webhook_url: hooks.url,
    });
    const [hook] = (await hooks.waitFor(before + 1)).slice(before);
    const headers = {
      'webhook-id': String(hook?.headers['webhook-id']),
      'webhook-timestamp': String(hook?.headers['webhook-timestamp']),
      'webhook-signature': String(hook?.headers['webhook-signature']),
    };
    new Webhook(fresh).verify(hook?.body ?? '', headers);
    assert.throws(() => new Webhook(old).verify(hook?.body ?? '', headers));
  });
});
