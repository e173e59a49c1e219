/**
 * The client library (packages/client) against a real running service: every programmatic
 * endpoint (storage destinations against an S3-compatible server, bucket-fixtures.ts), typed errors with the spec's fields, retries that honour Retry-After, the
 * signed-link builder and the webhook verifier held to the server's own implementations.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import {
  canonicalQuery as clientCanonical,
  signQuery as clientSign,
  renderLink,
  Shotsmith,
  ShotsmithError,
  verifyWebhook,
  WebhookVerificationError,
} from '../../packages/client/src/index.ts';
import { signWebhook } from '../../src/domain/jobs/webhook-secret.ts';
import { canonicalQuery, type QueryPair, signQuery } from '../../src/lib/signed-query.ts';
import { account, type TestPlan } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, imageSize, page, sleep, startSite } from '../helpers/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';
import { startBucket, type TestBucket } from './bucket-fixtures.ts';
import {
  GEOLOCATION,
  LOCATED_PAGE,
  LOCATED_TITLE,
  LOCKED_PROXY_ID,
  type OperatorProxies,
  operatorProxies,
  PROXY_COUNTRY,
  PROXY_ID,
  PROXY_LISTING,
} from './proxy-fixtures.ts';

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

describe('client library against the service', () => {
  let t: TestApp;
  let site: FixtureSite;
  let hooks: WebhookReceiver;
  let proxies: OperatorProxies;
  let bucket: TestBucket;
  const held: Array<() => void> = [];
  before(async () => {
    site = await startSite({
      '/': page('<h1 style="font:40px sans-serif">client</h1>'),
      '/located': LOCATED_PAGE,
      '/hold': (_req, res) =>
        new Promise<void>((resolve) => {
          held.push(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>held</p>'));
            resolve();
          });
        }),
    });
    hooks = await startWebhookReceiver();
    proxies = await operatorProxies();
    bucket = await startBucket();
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort},${bucket.hostPort}`,
        RENDER_CONCURRENCY: '1',
        RENDER_QUEUE: '0',
        PROXIES_FILE: proxies.file,
      },
      plans: { free: { rate_per_minute: 3, monthly_quota: 4 }, pro: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    for (const answer of held.splice(0)) answer();
    await t?.close();
    await site?.close();
    await hooks?.close();
    await proxies?.close();
    await bucket?.close();
  });

  /** A new account with a key (accounts.ts), and a client with that key. */
  const withClient = async (plan: TestPlan) => {
    const a = await account(t, { plan, key: true });
    return { ...a, api: new Shotsmith({ apiKey: a.key, baseUrl: t.url }) };
  };

  it('captures as JSON and as bytes, reads usage, plans and devices', async () => {
    const { api } = await withClient('free');
    const result = await api.capture({ url: `${site.origin}/`, width: 320, height: 200 });
    assert.match(result.image_url ?? '', /\/images\/.+\.png$/);
    assert.deepEqual([result.width, result.height, result.cached], [320, 200, false]);
    const image = await api.captureImage({ url: `${site.origin}/`, width: 320, height: 200 });
    assert.deepEqual(imageSize(Buffer.from(image.bytes)), {
      format: 'png',
      width: 320,
      height: 200,
    });
    assert.equal(image.contentType, 'image/png');
    assert.equal(image.cached, true);
    assert.equal(image.imageUrl, result.image_url);
    assert.deepEqual(image.quota, { used: 2, limit: 4 });
    assert.equal(image.screenshotId, null);
    const usage = await api.usage();
    assert.deepEqual([usage.plan, usage.used, usage.limit], ['free', 2, 4]);
    assert.ok((await api.plans()).data.some((p) => p.name === 'pro'));
    assert.ok((await api.devices()).data.length >= 20);
  });

  it('lists the proxies, and captures through one where the page is told it is (Pro)', async () => {
    const sent: Array<Record<string, unknown>> = [];
    const { key } = await withClient('pro');
    const api = new Shotsmith({
      apiKey: key,
      baseUrl: t.url,
      fetch: (input, init) => {
        if (typeof init?.body === 'string') sent.push(JSON.parse(init.body));
        return fetch(input, init);
      },
    });
    assert.deepEqual(await api.proxies(), PROXY_LISTING);

    const url = `${site.origin}/located?client`;
    const located = await api.capture({
      url,
      width: 320,
      height: 200,
      proxy: PROXY_ID,
      geolocation: GEOLOCATION,
      wait_for_selector: '#located',
      metadata: true,
    });
    assert.deepEqual(sent.at(-1), {
      url,
      width: 320,
      height: 200,
      proxy: PROXY_ID,
      geolocation: GEOLOCATION,
      wait_for_selector: '#located',
      metadata: true,
    });
    assert.equal(located.metadata?.title, LOCATED_TITLE, 'the page read the position given');
    assert.ok(proxies.carried(url), 'the page came through the proxy');

    const country = `${site.origin}/located?client-country`;
    const image = await api.captureImage({
      url: country,
      width: 320,
      height: 200,
      proxy_country: PROXY_COUNTRY,
    });
    assert.equal(sent.at(-1)?.proxy_country, PROXY_COUNTRY);
    assert.equal(image.contentType, 'image/png');
    assert.ok(proxies.carried(country), "the country's proxy carried it");

    // A proxy that fails is a 502 proxy_error; its message never holds the credentials.
    const failed = await refusal(
      api.capture({ url: `${site.origin}/?locked`, proxy: LOCKED_PROXY_ID }),
    );
    assert.deepEqual(
      [failed.status, failed.code, failed.message],
      [502, 'proxy_error', 'proxy authentication failed'],
    );
    const both = await refusal(api.capture({ url, proxy: PROXY_ID, proxy_country: PROXY_COUNTRY }));
    assert.deepEqual([both.status, both.code], [400, 'invalid_request']);

    // Free: the listing reads, the option is refused by the plan.
    const free = await withClient('free');
    assert.deepEqual(await free.api.proxies(), PROXY_LISTING);
    const plan = await refusal(free.api.capture({ url, proxy: PROXY_ID }));
    assert.deepEqual([plan.status, plan.code], [400, 'plan_restriction']);
    const nobody = new Shotsmith({ apiKey: 'sk_live_nope', baseUrl: t.url });
    assert.equal((await refusal(nobody.proxies())).status, 401);
  });

  it('adds, lists, tests and deletes storage destinations, and captures into one (Pro)', async () => {
    const { api } = await withClient('pro');
    const made = await api.destinations.create(bucket.destination({ name: 'ts', prefix: 'ts' }));
    assert.match(made.id, /^dst_[0-9A-Za-z]{24}$/);
    assert.deepEqual(
      [made.name, made.endpoint, made.bucket, made.prefix, made.path_style, made.acl],
      ['ts', bucket.s3.endpoint, bucket.s3.bucket, 'ts', true, 'private'],
    );
    assert.ok(
      !('secret_access_key' in made) && !('access_key_id' in made),
      'never the credentials',
    );
    assert.deepEqual(await api.destinations.list(), { data: [made] });
    assert.deepEqual(await api.destinations.get(made.id), made);
    const tested = await api.destinations.test(made.id);
    assert.equal(tested.id, made.id);
    assert.ok(tested.tested_at >= made.tested_at);

    const url = `${site.origin}/?client-storage`;
    const result = await api.capture({
      url,
      width: 320,
      height: 200,
      storage: { destination: made.id, path: '{host}/{id}.{ext}' },
    });
    const copy = result.storage;
    assert.ok(copy, JSON.stringify(result));
    assert.deepEqual([copy.destination, copy.bucket], [made.id, bucket.s3.bucket]);
    assert.match(copy.key, /^ts\/127\.0\.0\.1\/[^/]+\.png$/);
    const object = await bucket.object(copy.key);
    assert.equal(object.type, 'image/png');
    const hosted = await fetch(result.image_url ?? '');
    assert.deepEqual(Buffer.from(await hosted.arrayBuffer()), object.bytes, 'the same image');
    // hosted: false keeps it in the bucket only.
    const only = await api.capture({
      url: `${url}-only`,
      width: 320,
      height: 200,
      storage: { destination: made.id, hosted: false },
    });
    assert.equal(only.image_url, undefined);
    assert.ok((await bucket.object(only.storage?.key ?? '')).bytes.length > 100);

    // What the bucket refuses is typed, with the provider's code; nothing is saved.
    const refused = await refusal(
      api.destinations.create(bucket.destination({ bucket: 'no-such-bucket-here' })),
    );
    assert.deepEqual([refused.status, refused.code], [400, 'storage_test_failed']);
    assert.match(refused.message, /NoSuchBucket/);
    const privateEndpoint = await refusal(
      api.destinations.create(bucket.destination({ endpoint: 'http://10.0.0.5:9000' })),
    );
    assert.deepEqual([privateEndpoint.status, privateEndpoint.code], [400, 'url_not_allowed']);
    // A bucket that goes away after: the upload is a 502, and a test says so too.
    const spare = await bucket.spareBucket('client-spare');
    const doomed = await api.destinations.create(
      bucket.destination({ name: 'doomed', bucket: spare.name }),
    );
    await spare.remove();
    const failed = await refusal(
      api.capture({ url: `${url}-gone`, storage: { destination: doomed.id } }),
    );
    assert.deepEqual([failed.status, failed.code], [502, 'storage_destination_error']);
    assert.match(failed.message, /NoSuchBucket/);
    const retested = await refusal(api.destinations.test(doomed.id));
    assert.deepEqual([retested.status, retested.code], [400, 'storage_test_failed']);

    await api.destinations.delete(made.id);
    await api.destinations.delete(doomed.id);
    assert.deepEqual(await api.destinations.list(), { data: [] });
    assert.equal((await refusal(api.destinations.get(made.id))).status, 404);
    assert.equal((await refusal(api.destinations.delete(made.id))).status, 404);
    // What the deleted destination wrote stays in the bucket.
    assert.equal((await bucket.keys('ts/')).length, 2);

    // Free: nothing to list, and adding one is the plan's refusal.
    const free = await withClient('free');
    assert.deepEqual(await free.api.destinations.list(), { data: [] });
    const plan = await refusal(free.api.destinations.create(bucket.destination()));
    assert.deepEqual([plan.status, plan.code], [400, 'plan_restriction']);
  });

  it('turns refusals into typed errors with the spec fields', async () => {
    const bad = new Shotsmith({ apiKey: 'sk_live_nope', baseUrl: t.url });
    const unauthorized = await refusal(bad.usage());
    assert.deepEqual(
      [unauthorized.status, unauthorized.code, unauthorized.message],
      [401, 'unauthorized', 'unauthorized'],
    );

    const { api } = await withClient('free');
    const invalid = await refusal(
      api.capture({ url: `${site.origin}/`, width: 'wide' as unknown as number }),
    );
    assert.deepEqual(
      [invalid.status, invalid.code, invalid.message],
      [400, 'invalid_request', 'width must be an integer'],
    );
    const plan = await refusal(api.capture({ url: `${site.origin}/`, format: 'webp' }));
    assert.equal(plan.code, 'plan_restriction');

    // The rate (3 a minute): the 429's reset_time; Retry-After beyond the bound is not waited.
    const limited = new Shotsmith({
      apiKey: (await withClient('free')).key,
      baseUrl: t.url,
      maxRetryDelayMs: 100,
    });
    let rate: ShotsmithError | null = null;
    for (let i = 0; i < 4 && rate === null; i++) {
      await limited
        .capture({ url: `${site.origin}/?r${i}`, width: 320, height: 200 })
        .catch((e: unknown) => {
          rate = e as ShotsmithError;
        });
    }
    const r = rate as ShotsmithError | null;
    assert.ok(r);
    assert.equal(r.status, 429);
    assert.equal(r.code, 'rate_limited');
    assert.ok(r.resetTime !== null && r.resetTime > Date.now() / 1000);
    assert.ok(r.retryAfter !== null && r.retryAfter >= 1);

    // The quota (4 a month): the 402's resets_at.
    const spent = await withClient('free');
    const fast = new Shotsmith({ apiKey: spent.key, baseUrl: t.url, maxRetryDelayMs: 100 });
    // Its four units spent through the service's own store, without rendering.
    const month = new Date().toISOString().slice(0, 7);
    for (let i = 0; i < 4; i++)
      await t.deps.ctx.store.quota.reserve({ userId: spent.id, period: month }, { limit: 4 });
    const quota = await refusal(fast.capture({ url: `${site.origin}/` }));
    assert.equal(quota.status, 402);
    assert.equal(quota.code, 'quota_exceeded');
    assert.match(String(quota.resetsAt), /^\d{4}-\d{2}-01T00:00:00.000Z$/);

    const nowhere = new Shotsmith({ apiKey: spent.key, baseUrl: 'http://127.0.0.1:9' });
    const network = await refusal(nowhere.usage());
    assert.deepEqual([network.status, network.code], [0, 'network_error']);
  });

  it('follows no redirect with the API key', async () => {
    const { key } = await withClient('free');
    const seen: Array<string | undefined> = [];
    const elsewhere = await startSite({
      '/v1/usage': (req, res) => {
        seen.push(req.headers['x-api-key'] as string | undefined);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      },
    });
    // A moved or hostile front: every answer is a redirect to another host, 307 keeping the
    // method and body, 301 the classic move.
    const front = await startSite({
      '/v1/usage': (_req, res) => {
        res.writeHead(307, { location: `${elsewhere.origin}/v1/usage` }).end();
      },
      '/v1/screenshots': (_req, res) => {
        res.writeHead(301, { location: `${t.url}/v1/screenshots` }).end();
      },
    });
    try {
      const api = new Shotsmith({ apiKey: key, baseUrl: front.origin });
      const usage = await refusal(api.usage());
      assert.deepEqual([usage.status, usage.code], [307, 'unexpected_redirect']);
      assert.match(usage.message, new RegExp(`redirecting to ${elsewhere.origin}`));
      const capture = await refusal(api.capture({ url: `${site.origin}/` }));
      assert.deepEqual([capture.status, capture.code], [301, 'unexpected_redirect']);
      assert.deepEqual(seen, [], 'the key never reached the other host');
    } finally {
      await front.close();
      await elsewhere.close();
    }
  });

  it('retries a 503 after its Retry-After and then succeeds', async () => {
    const holder = await withClient('pro');
    // One render slot, no queue: while /hold renders, any other capture is a 503.
    const hold = holder.api.capture({ url: `${site.origin}/hold`, width: 320, height: 200 });
    for (let i = 0; i < 100 && held.length === 0; i++) await sleep(50);
    const calls: number[] = [];
    const other = await withClient('pro');
    const api = new Shotsmith({
      apiKey: other.key,
      baseUrl: t.url,
      maxRetryDelayMs: 10_000,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        calls.push(res.status);
        return res;
      },
    });
    const pending = api.capture({ url: `${site.origin}/`, width: 320, height: 200, fresh: true });
    for (let i = 0; i < 100 && calls.length === 0; i++) await sleep(50);
    assert.deepEqual(calls, [503]);
    for (const answer of held.splice(0)) answer();
    await hold;
    const result = await pending;
    assert.match(result.image_url ?? '', /\.png$/);
    assert.deepEqual(calls, [503, 201]);
  });

  it('lists, reads and deletes Pro records; queues and waits for async jobs', async () => {
    const { api, cookie } = await withClient('pro');
    const made = await api.capture({ url: `${site.origin}/?pro`, width: 320, height: 200 });
    const id = made.id as number;
    const record = await api.screenshot(id);
    assert.equal(record.status, 'succeeded');
    const list = await api.list({ limit: 5 });
    assert.deepEqual(
      list.data.map((s) => s.id),
      [id],
    );
    await api.delete(id);
    const gone = await refusal(api.screenshot(id));
    assert.deepEqual([gone.status, gone.code], [404, 'not_found']);

    const job = await api.queue({ url: `${site.origin}/?job`, width: 320, height: 200 }, hooks.url);
    assert.equal(job.status, 'queued');
    const seen: string[] = [];
    const done = await api.wait(job.id, { intervalMs: 50, onStatus: (s) => seen.push(s.status) });
    assert.equal(done.status, 'succeeded');
    assert.equal(seen.at(-1), 'succeeded');
    // The webhook verifies with the client's verifier, given the account's secret.
    const [hook] = await hooks.waitFor(1);
    assert.ok(hook);
    const secret = (
      (await (await t.fetch('/v1/webhooks/secret', { cookie })).json()) as { secret: string }
    ).secret;
    const headers = {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    };
    const event = await verifyWebhook(secret, headers, hook.body);
    assert.equal(event.type, 'screenshot.succeeded');
    assert.equal(event.data.id, job.id);
    await assert.rejects(verifyWebhook(secret, headers, `${hook.body} `), WebhookVerificationError);
  });

  it('queues a batch, reads it until it completes, and verifies batch.completed', async () => {
    const { api, cookie } = await withClient('pro');
    const queued = await api.batch(
      [
        { url: `${site.origin}/?batch1`, width: 320, height: 200 },
        { url: `${site.origin}/?batch2`, width: 320, height: 200 },
      ],
      hooks.url,
    );
    assert.match(queued.batch_id, /^bat_\w{24}$/);
    assert.deepEqual(
      queued.jobs.map((j) => j.status),
      ['queued', 'queued'],
    );
    const seen: string[] = [];
    const done = await api.waitBatch(queued.batch_id, {
      intervalMs: 50,
      onStatus: (b) => seen.push(b.status),
    });
    assert.equal(seen.at(-1), 'completed');
    assert.deepEqual(
      [done.status, done.total, done.succeeded, done.failed],
      ['completed', 2, 2, 0],
    );
    assert.deepEqual(
      done.jobs.map((j) => j.id),
      queued.jobs.map((j) => j.id),
    );
    assert.equal((await api.getBatch(queued.batch_id)).batch_id, queued.batch_id);
    const secret = (
      (await (await t.fetch('/v1/webhooks/secret', { cookie })).json()) as { secret: string }
    ).secret;
    let completed: { type: string; data: Record<string, unknown> } | undefined;
    for (let i = 0; i < 200 && !completed; i++) {
      for (const hook of hooks.received) {
        if (!hook.body.includes(queued.batch_id)) continue;
        completed = await verifyWebhook(
          secret,
          {
            'webhook-id': String(hook.headers['webhook-id']),
            'webhook-timestamp': String(hook.headers['webhook-timestamp']),
            'webhook-signature': String(hook.headers['webhook-signature']),
          },
          hook.body,
        );
      }
      if (!completed) await sleep(50);
    }
    assert.equal(completed?.type, 'batch.completed');
    assert.deepEqual(completed?.data, { batch_id: queued.batch_id, succeeded: 2, failed: 0 });

    // Refusals are typed errors naming the request.
    const bad = await refusal(
      api.batch([{ url: `${site.origin}/` }, { url: `${site.origin}/`, quality: 500 }]),
    );
    assert.deepEqual([bad.status, bad.code], [400, 'invalid_request']);
    assert.equal(bad.message, 'requests[1].quality must be <= 100');
    const missing = await refusal(api.getBatch(`bat_${'0'.repeat(24)}`));
    assert.deepEqual([missing.status, missing.code], [404, 'not_found']);
    const free = await withClient('free');
    const plan = await refusal(free.api.batch([{ url: `${site.origin}/` }]));
    assert.deepEqual([plan.status, plan.code], [400, 'plan_restriction']);
  });

  it('builds signed links the service accepts, byte for byte as the server signs', async () => {
    const { api, keyId, signingSecret } = await withClient('free');
    const link = await api.renderLink({
      keyId,
      signingSecret,
      options: {
        url: `${site.origin}/?link`,
        width: 320,
        height: 200,
        hide_selectors: ['#a', '.b c'],
      },
    });
    const res = await fetch(link, { redirect: 'manual' });
    assert.equal(res.status, 302, await res.clone().text());
    const pairs: QueryPair[] = [
      ['url', 'https://example.com/?q=a+b&ü=😀'],
      ['hide_selectors', "[data-x='1']"],
      ['hide_selectors', '#a'],
      ['key_id', '7'],
      ['expires', '1767225600'],
    ];
    // An operator proxy's id rides in a link; a proxy URL (credentials and all) never does.
    const viaProxy = new URL(
      await api.renderLink({
        keyId,
        signingSecret,
        options: { url: 'https://e.com', proxy: 'de-1' },
      }),
    );
    assert.equal(viaProxy.searchParams.get('proxy'), 'de-1');
    await assert.rejects(
      api.renderLink({
        keyId,
        signingSecret,
        options: { url: 'https://e.com', proxy: 'socks5://user:pw@proxy.example.net:1080' },
      }),
      /proxy is a URL, and a render link cannot carry one/,
    );
    assert.equal(clientCanonical(pairs), canonicalQuery(pairs));
    assert.equal(await clientSign(signingSecret, pairs), signQuery(signingSecret, pairs));
    await assert.rejects(
      renderLink({
        baseUrl: t.url,
        keyId,
        signingSecret,
        options: { url: 'x' },
        expires: Date.now() / 1000 + 8 * 86400,
      }),
      /at most 604800 seconds/,
    );
  });

  it('verifies webhooks exactly as the server signs them, and as standardwebhooks does', async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const body = JSON.stringify({
      type: 'screenshot.failed',
      timestamp: new Date().toISOString(),
      data: { id: 'job_x', status: 'failed' },
    });
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(ts),
      'webhook-signature': signWebhook(secret, 'msg_1', ts, body),
    };
    assert.equal((await verifyWebhook(secret, headers, body)).type, 'screenshot.failed');
    new Webhook(secret).verify(body, headers);
    // Several signatures (a rotation): any match is enough.
    const both = { ...headers, 'webhook-signature': `v1,AAAA ${headers['webhook-signature']}` };
    await verifyWebhook(secret, new Headers(both), body);
    await assert.rejects(
      verifyWebhook(
        secret,
        {
          ...headers,
          'webhook-timestamp': String(ts - 3600),
          'webhook-signature': signWebhook(secret, 'msg_1', ts - 3600, body),
        },
        body,
      ),
      /too far from now/,
    );
    await assert.rejects(
      verifyWebhook(secret, { ...headers, 'webhook-id': 'msg_2' }, body),
      /no signature matches/,
    );
  });
});
