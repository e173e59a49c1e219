import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, imageSize, page, startSite } from '../helpers/fixtures.ts';

const nextUtcMidnight = () => {
  const d = new Date();
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) / 1000;
};

describeEachDatabase('demo endpoint', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/': page('<h1>demo</h1>'), '/other': page('<h1>other</h1>') });
    t = await startApp({ db, env: { EGRESS_ALLOWLIST: site.hostPort } });
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  const demo = (json: unknown, headers: Record<string, string> = {}) =>
    t.fetch('/demo/screenshot', { method: 'POST', json, headers });

  it('refuses bad input and private targets without counting them', async () => {
    for (const [json, code] of [
      [{ url: `${site.origin}/`, width: 500 }, 'invalid_request'],
      [{}, 'invalid_request'],
      [{ url: 'file:///etc/passwd' }, 'url_not_allowed'],
      [{ url: 'http://169.254.169.254/' }, 'url_not_allowed'],
      [{ url: 'http://localhost/' }, 'url_not_allowed'],
      [{ url: 'http://[::ffff:10.0.0.1]/' }, 'url_not_allowed'],
    ] as const) {
      const res = await demo(json);
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(((await res.json()) as { code: string }).code, code);
    }
  });

  it('captures a fixed 1280x720 PNG kept 24 hours, 5 per day, then the 429', async () => {
    const statuses: number[] = [];
    let first: { image_url: string; cached: boolean; expires_at: string } | undefined;
    for (let i = 0; i < 5; i++) {
      // An API key is ignored here.
      const res = await demo({ url: `${site.origin}/` }, { 'x-api-key': 'sk_live_whatever' });
      statuses.push(res.status);
      const body = (await res.json()) as { image_url: string; cached: boolean; expires_at: string };
      if (i === 0) first = body;
      if (i === 0)
        assert.deepEqual(Object.keys(body).sort(), [
          'cached',
          'expires_at',
          'image_url',
          'warnings',
        ]);
    }
    assert.deepEqual(statuses, [201, 201, 201, 201, 201]);
    assert.ok(first);
    assert.equal(first.cached, false);
    assert.ok(Math.abs(Date.parse(first.expires_at) - (Date.now() + 24 * 3_600_000)) < 60_000);
    const img = await fetch(first.image_url);
    assert.equal(img.headers.get('content-type'), 'image/png');
    assert.deepEqual(imageSize(Buffer.from(await img.arrayBuffer())), {
      format: 'png',
      width: 1280,
      height: 720,
    });

    // X-Forwarded-For is not believed without TRUST_PROXY.
    const sixth = await demo({ url: `${site.origin}/other` }, { 'x-forwarded-for': '203.0.113.9' });
    assert.equal(sixth.status, 429);
    const body = (await sixth.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), [
      'error',
      'limit',
      'message',
      'plan',
      'remaining',
      'reset_time',
      'success',
      'used',
    ]);
    assert.equal(body.error, 'rate limit exceeded');
    assert.equal(body.plan, 'demo');
    assert.equal(body.success, false);
    assert.equal(body.limit, 5);
    assert.equal(body.used, 5);
    assert.equal(body.remaining, 0);
    assert.equal(body.reset_time, nextUtcMidnight());
    const retry = Number(sixth.headers.get('retry-after'));
    assert.ok(retry > 0 && retry <= 86_400);
  });
});

describeEachDatabase('demo behind a trusted proxy', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/': page('<h1>demo</h1>') });
    t = await startApp({ db, env: { EGRESS_ALLOWLIST: site.hostPort, TRUST_PROXY: '127.0.0.1' } });
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  it('counts per forwarded client, and IPv6 clients by /64', async () => {
    const demo = (ip: string) =>
      t.fetch('/demo/screenshot', {
        method: 'POST',
        json: { url: `${site.origin}/` },
        headers: { 'x-forwarded-for': ip },
      });
    for (let i = 0; i < 5; i++) assert.equal((await demo(`2001:db8:1:2::${i + 1}`)).status, 201);
    // Same /64, another address: same allowance.
    assert.equal((await demo('2001:db8:1:2:ffff::9')).status, 429);
    // Another client is unaffected.
    assert.equal((await demo('198.51.100.7')).status, 201);
  });

  it('allows 30 requests an hour per client (IPv6 by /64), refused ones included', async () => {
    const send = (ip: string, json: unknown) =>
      t.fetch('/demo/screenshot', { method: 'POST', json, headers: { 'x-forwarded-for': ip } });
    // Requests that fail cheaply, from two addresses of one /64: none uses the daily
    // allowance, all of them draw on the hourly budget.
    const cheap = [
      { url: 'http://169.254.169.254/' },
      { url: 'not a url' },
      {},
      { url: `${site.origin}/`, width: 300 },
    ];
    const startedAt = Date.now();
    for (let i = 0; i < 30; i++) {
      const ip = i % 2 ? '2001:db8:7:8::1' : '2001:db8:7:8:aaaa::2';
      const res = await send(ip, cheap[i % cheap.length]);
      assert.equal(res.status, 400, `request ${i + 1}`);
      await res.body?.cancel();
    }
    // The 31st, a good request from a third address of the same /64: the demo 429.
    const over = await send('2001:db8:7:8:ffff:ffff:ffff:ffff', { url: `${site.origin}/` });
    assert.equal(over.status, 429);
    const body = (await over.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), [
      'error',
      'limit',
      'message',
      'plan',
      'remaining',
      'reset_time',
      'success',
      'used',
    ]);
    assert.equal(body.error, 'rate limit exceeded');
    assert.equal(body.plan, 'demo');
    assert.equal(body.limit, 30);
    assert.equal(body.used, 30);
    assert.equal(body.remaining, 0);
    // The end of the hour that began with the client's first request.
    const reset = Number(body.reset_time) * 1000;
    assert.ok(reset >= startedAt + 3_600_000 - 1_000, `reset_time ${body.reset_time}`);
    assert.ok(reset <= Date.now() + 3_600_000 + 1_000, `reset_time ${body.reset_time}`);
    const retry = Number(over.headers.get('retry-after'));
    assert.ok(retry > 3_000 && retry <= 3_601, `Retry-After ${retry}`);
    // Still refused when the body is not even valid: counting comes first.
    assert.equal((await send('2001:db8:7:8::1', {})).status, 429);
    // Another /64 has its own budget and its allowance.
    assert.equal((await send('2001:db8:7:9::1', { url: `${site.origin}/` })).status, 201);
  });
});
