/**
 * GET /v1/render, signed render links (docs/api.md, "Signed render links"), through the real
 * HTTP surface on both databases: a good link is a capture under the key's account (302 to
 * the image, cache; a render costs a unit, a hit none); every refusal; the signing secret
 * replaced; accounts kept apart; the key's own window of link requests.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type QueryPair, signedQueryString } from '../../src/lib/signed-query.ts';
import { account } from '../helpers/accounts.ts';
import { createKey, describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, imageSize, page, sleep, startSite } from '../helpers/fixtures.ts';
import { serviceSkip, TEST_REDIS_URL } from '../helpers/services.ts';

const nowSeconds = () => Math.floor(Date.now() / 1000);

describeEachDatabase('signed render links', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/': page('<h1>linked</h1>'), '/other': page('<h1>other</h1>') });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { free: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const link = (
    key: { keyId: number; signingSecret: string },
    options: QueryPair[],
    expires = nowSeconds() + 3600,
  ) =>
    `/v1/render?${signedQueryString(key.signingSecret, [
      ...options,
      ['key_id', String(key.keyId)],
      ['expires', String(expires)],
    ])}`;
  const get = (path: string, init: RequestInit = {}) =>
    fetch(`${t.url}${path}`, { redirect: 'manual', ...init });
  const used = async (apiKey: string) =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': apiKey } })).json()) as {
        used: number;
      }
    ).used;
  const small: QueryPair[] = [
    ['width', '320'],
    ['height', '200'],
  ];

  it('a good link captures, counts, and redirects to the image with a bounded cache', async () => {
    const a = await account(t, { key: true });
    const expires = nowSeconds() + 3600;
    const path = link(a, [['url', `${site.origin}/`], ...small], expires);
    const res = await get(path);
    assert.equal(res.status, 302, await res.clone().text());
    assert.equal(res.headers.get('x-cache'), 'MISS');
    const location = res.headers.get('location') ?? '';
    assert.match(location, /^http:\/\/127\.0\.0\.1:\d+\/images\/[A-Za-z0-9_-]{22}\.png$/);
    const maxAge = Number(
      /^public, max-age=(\d+)$/.exec(res.headers.get('cache-control') ?? '')?.[1],
    );
    assert.ok(maxAge > 3500 && maxAge <= 3600, `max-age ${maxAge} is up to the link's expiry`);
    const image = Buffer.from(await (await fetch(location)).arrayBuffer());
    assert.deepEqual(imageSize(image), { format: 'png', width: 320, height: 200 });
    assert.equal(await used(a.key), 1);
    // The same link again: a cache hit, the same image, and free (a link costs renders).
    const again = await get(path);
    assert.equal(again.status, 302);
    assert.equal(again.headers.get('x-cache'), 'HIT');
    assert.equal(again.headers.get('location'), location);
    assert.equal(await used(a.key), 1);
    // HEAD (a link checker) neither captures nor counts.
    assert.notEqual((await get(path, { method: 'HEAD' })).status, 302);
    assert.equal(await used(a.key), 1);
  });

  it('takes options with the body names: lists repeated, booleans and numbers as text', async () => {
    const a = await account(t, { key: true });
    const res = await get(
      link(a, [
        ['url', `${site.origin}/other`],
        ['format', 'jpeg'],
        ['quality', '40'],
        ['full_page', 'false'],
        ['hide_selectors', 'h1'],
        ['hide_selectors', '.none'],
        ...small,
      ]),
    );
    assert.equal(res.status, 302, await res.clone().text());
    const image = Buffer.from(await (await fetch(res.headers.get('location') ?? '')).arrayBuffer());
    assert.deepEqual(imageSize(image), { format: 'jpeg', width: 320, height: 200 });
    assert.equal(site.hits.get('/other'), 1);
  });

  it('refuses a changed, expired, unsigned or unknown-key link with the same bare 401', async () => {
    const a = await account(t, { key: true });
    const hitsBefore = site.hits.get('/') ?? 0;
    const good = link(a, [['url', `${site.origin}/`], ...small]);
    const cases = {
      tampered: good.replace('width=320', 'width=321'),
      'added parameter': `${good}&full_page=true`,
      expired: link(a, [['url', `${site.origin}/`]], nowSeconds() - 5),
      unsigned: good.replace(/&signature=[0-9a-f]+$/, ''),
      'uppercase hex': good.replace(
        /signature=([0-9a-f]+)$/,
        (_m, s: string) => `signature=${s.toUpperCase()}`,
      ),
      'unknown key': link({ keyId: 999_999, signingSecret: a.signingSecret }, [
        ['url', `${site.origin}/`],
      ]),
      'no key id': `/v1/render?${signedQueryString(a.signingSecret, [
        ['url', `${site.origin}/`],
        ['expires', String(nowSeconds() + 60)],
      ])}`,
    };
    for (const [name, path] of Object.entries(cases)) {
      const res = await get(path);
      assert.equal(res.status, 401, name);
      assert.deepEqual(await res.json(), { error: 'unauthorized' }, name);
    }
    assert.equal(await used(a.key), 0, 'no refusal counts');
    assert.equal(site.hits.get('/') ?? 0, hitsBefore, 'no refusal reaches the target');
  });

  it('says what is wrong with expires, and refuses fields a link cannot carry', async () => {
    const a = await account(t, { key: true });
    const url: QueryPair = ['url', `${site.origin}/`];
    const tooFar = await get(link(a, [url], nowSeconds() + 7 * 86_400 + 120));
    assert.equal(tooFar.status, 400);
    assert.match(
      ((await tooFar.json()) as { error: string }).error,
      /^expires must be at most 604800 seconds/,
    );
    const missing = await get(`/v1/render?url=x&key_id=${a.keyId}&signature=${'0'.repeat(64)}`);
    assert.equal(missing.status, 400);
    assert.equal(
      ((await missing.json()) as { error: string }).error,
      'expires is required (Unix seconds)',
    );
    const notNumber = await get(`/v1/render?key_id=${a.keyId}&expires=soon`);
    assert.equal(
      ((await notNumber.json()) as { error: string }).error,
      'expires must be a whole number of Unix seconds',
    );
    const refusals: Array<[QueryPair[], string | RegExp]> = [
      [[url, ['clip', '{"x":0}']], 'clip is not allowed in a render link (an object)'],
      [[url, ['headers', 'x']], 'headers is not allowed in a render link (an object)'],
      [[url, ['response_type', 'image']], /^response_type is not allowed in a render link/],
      [[url, ['fresh', 'true']], /^fresh is not allowed in a render link \(every replay/],
      [[url, ['cache_ttl', '0']], /^cache_ttl in a render link is at least 60 seconds/],
      [[url, ['width', 'wide']], 'width must be an integer'],
      [[url, ['full_page', 'yes']], 'full_page must be a boolean (true or false)'],
      [[url, ['width', '300'], ['width', '400']], 'width is given more than once'],
      [[url, ['colour', 'red']], 'unknown field "colour"'],
      [[['url', 'http://10.0.0.1/']], 'url_not_allowed'],
      [[url, ['format', 'webp']], 'plan_restriction'],
    ];
    for (const [pairs, expected] of refusals) {
      const res = await get(link(a, pairs));
      assert.equal(res.status, 400, String(expected));
      const body = (await res.json()) as { error: string; code: string };
      if (expected instanceof RegExp) assert.match(body.error, expected);
      else if (expected === 'url_not_allowed' || expected === 'plan_restriction')
        assert.equal(body.code, expected);
      else assert.equal(body.error, expected);
    }
    const badEscape = await get(`/v1/render?url=%E0%A4&key_id=${a.keyId}`);
    assert.equal(badEscape.status, 400);
    const many = await get(
      `/v1/render?${Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&')}`,
    );
    assert.equal(
      ((await many.json()) as { error: string }).error,
      'a render link may have at most 100 query parameters',
    );
    assert.equal(await used(a.key), 0);
  });

  it('a revoked key, and a replaced secret, end the links signed before', async () => {
    const a = await account(t, { key: true });
    const url: QueryPair = ['url', `${site.origin}/`];
    const before = link(a, [url, ...small]);
    assert.equal((await get(before)).status, 302);
    const replaced = await t.fetch(`/v1/keys/${a.keyId}/signing-secret`, {
      method: 'POST',
      cookie: a.cookie,
    });
    assert.equal(replaced.status, 200);
    assert.equal(replaced.headers.get('cache-control'), 'no-store');
    const body = (await replaced.json()) as { id: number; signing_secret: string };
    assert.equal(body.id, a.keyId);
    assert.match(body.signing_secret, /^sig_live_[0-9A-Za-z]{43}$/);
    assert.notEqual(body.signing_secret, a.signingSecret);
    assert.equal((await get(before)).status, 401, 'the old secret is refused');
    const renewed = link({ keyId: a.keyId, signingSecret: body.signing_secret }, [url, ...small]);
    assert.equal((await get(renewed)).status, 302);
    // The API key itself is unchanged by a new signing secret (the second link was a hit).
    assert.equal(await used(a.key), 1);
    assert.equal(
      (await t.fetch(`/v1/keys/${a.keyId}`, { method: 'DELETE', cookie: a.cookie })).status,
      200,
    );
    assert.equal((await get(renewed)).status, 401, 'a revoked key signs nothing');
    const gone = await t.fetch(`/v1/keys/${a.keyId}/signing-secret`, {
      method: 'POST',
      cookie: a.cookie,
    });
    assert.equal(gone.status, 404);
  });

  it("keeps accounts apart: another account's key id or secret signs nothing", async () => {
    const a = await account(t, { key: true });
    const b = await account(t, { key: true });
    const url: QueryPair = ['url', `${site.origin}/`];
    // B's key id with A's secret (A guessing B's ids), and A's key id with B's secret.
    const crossed = [
      link({ keyId: b.keyId, signingSecret: a.signingSecret }, [url]),
      link({ keyId: a.keyId, signingSecret: b.signingSecret }, [url]),
    ];
    for (const path of crossed) assert.equal((await get(path)).status, 401);
    // Only the owner replaces a key's secret; for anyone else the key does not exist.
    const foreign = await t.fetch(`/v1/keys/${a.keyId}/signing-secret`, {
      method: 'POST',
      cookie: b.cookie,
    });
    assert.equal(foreign.status, 404);
    assert.equal((await get(link(a, [url, ...small]))).status, 302, "A's secret still works");
    assert.deepEqual([await used(a.key), await used(b.key)], [1, 0]);
  });
});

/**
 * What a link costs (docs/api.md, "Signed render links"; issue 29), on every
 * limits backend: the memory counters (SQLite), the PostgreSQL table, Redis. A link is
 * public, so its replays must neither spend its owner's quota nor lock its owner's API
 * calls out: a hit is free, a render costs one unit, and link requests draw on the key's
 * own per-minute window (Free 60), never on the account's capture rate.
 */
const COST_VARIANTS = [
  { name: 'sqlite, memory counters', db: 'sqlite', redis: false },
  { name: 'postgres, counters in the database', db: 'postgres', redis: false },
  { name: 'sqlite, Redis counters', db: 'sqlite', redis: true },
] as const;

for (const variant of COST_VARIANTS) {
  describe(`signed render links: what they cost [${variant.name}]`, async () => {
    const skip =
      (variant.db === 'postgres' && (await serviceSkip('postgres'))) ||
      (variant.redis && (await serviceSkip('redis')));
    if (skip) {
      it('skipped', { skip }, () => {});
      return;
    }
    let t: TestApp;
    let site: FixtureSite;
    /** The app's clock runs this far ahead of the real one (a cache entry outlived). */
    let ahead = 0;
    before(async () => {
      site = await startSite({ '/': page('<h1>cost</h1>'), '/slow': slowPage });
      t = await startApp({
        db: variant.db,
        clock: () => Date.now() + ahead,
        env: {
          EGRESS_ALLOWLIST: site.hostPort,
          ...(variant.redis
            ? {
                REDIS_URL: TEST_REDIS_URL,
                REDIS_PREFIX: `links-${randomBytes(4).toString('hex')}:`,
              }
            : {}),
        },
        // A capture rate far below the link window: were links drawing on it, the third
        // replay would be a 429 and the owner's own captures after them too.
        plans: {
          free: { rate_per_minute: 2, monthly_quota: 2 },
          pro: { rate_per_minute: 2 },
        },
      });
    });
    after(async () => {
      await t?.close();
      await site?.close();
    });

    const linkFor = (key: { keyId: number; signingSecret: string }, path = '/') =>
      `/v1/render?${signedQueryString(key.signingSecret, [
        ['url', `${site.origin}${path}`],
        ['width', '320'],
        ['height', '200'],
        ['key_id', String(key.keyId)],
        ['expires', String(nowSeconds() + 3600)],
      ])}`;
    const get = (path: string) => fetch(`${t.url}${path}`, { redirect: 'manual' });
    const used = async (apiKey: string) => {
      const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': apiKey } });
      assert.equal(res.status, 200, 'the owner reads its usage');
      return ((await res.json()) as { used: number }).used;
    };
    const capture = (apiKey: string) =>
      t.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': apiKey },
        json: { url: `${site.origin}/?api`, width: 320, height: 200 },
      });

    it('a link replayed 100 times renders once and costs one unit; the owner still captures', async () => {
      const a = await account(t, { plan: 'pro', key: true });
      const path = linkFor(a, '/slow?replayed');
      const before = site.hits.get('/slow') ?? 0;
      // Ten at once on a cold cache: one renders, the others join it.
      const first = await Promise.all(Array.from({ length: 10 }, () => get(path)));
      const rest: Response[] = [];
      for (let i = 0; i < 90; i++) rest.push(await get(path));
      const all = [...first, ...rest];
      assert.deepEqual(
        [...new Set(all.map((r) => r.status))],
        [302],
        'every replay is answered with the image',
      );
      assert.equal(new Set(all.map((r) => r.headers.get('location'))).size, 1, 'one image');
      assert.equal(all.filter((r) => r.headers.get('x-cache') === 'MISS').length, 1);
      assert.equal((site.hits.get('/slow') ?? 0) - before, 1, 'the page was loaded once');
      assert.equal(await used(a.key), 1, 'one render, one unit');
      // The account's capture rate (2 a minute here) is untouched by the 100 link requests.
      for (let i = 0; i < 2; i++) assert.equal((await capture(a.key)).status, 201);
      assert.equal(await used(a.key), 3, 'the API counts its hits, as ever');
    });

    it('the 61st link request of a key in a minute is 429; the owner, and its other keys, go on', async () => {
      const a = await account(t, { key: true });
      const path = linkFor(a);
      const statuses: number[] = [];
      for (let i = 0; i < 60; i++) statuses.push((await get(path)).status);
      assert.deepEqual([...new Set(statuses)], [302], 'the first 60 pass');
      const refused = await get(path);
      assert.equal(refused.status, 429);
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal(refused.headers.get('x-ratelimit-limit'), '60');
      assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
      const body = (await refused.json()) as Record<string, unknown>;
      assert.equal(body.error, 'rate limit exceeded');
      assert.equal(body.limit, 60);
      assert.equal(body.used, 60);
      assert.equal(body.remaining, 0);
      assert.equal(body.plan, 'free');
      assert.match(String(body.message), /^Rate limit of 60 link requests per minute exceeded/);
      // The owner's own API calls draw on windows the links never touched.
      assert.equal((await capture(a.key)).status, 201);
      assert.equal(await used(a.key), 2, "one link render and the owner's capture");
      // The window is the key's: another key of the account signs links that still work.
      const other = await createKey(t, a.cookie, 'second');
      const again = await get(linkFor({ keyId: other.id, signingSecret: other.signing_secret }));
      assert.equal(again.status, 302);
      assert.equal(again.headers.get('x-cache'), 'HIT', "the account's cache, free");
    });

    it('a render costs a unit and a hit none: at the end of the quota, hits still pass', async () => {
      const a = await account(t, { key: true }); // 2 units a month here
      const one = linkFor(a, '/?one');
      const two = linkFor(a, '/?two');
      assert.equal((await get(one)).headers.get('x-cache'), 'MISS');
      assert.equal((await get(one)).headers.get('x-cache'), 'HIT');
      assert.equal(await used(a.key), 1);
      assert.equal((await get(two)).status, 302);
      assert.equal(await used(a.key), 2);
      // Spent: a link that would render is refused before it renders, a cached one is free.
      const hitsBefore = site.hits.get('/') ?? 0;
      const refused = await get(linkFor(a, '/?three'));
      assert.equal(refused.status, 402);
      const body = (await refused.json()) as Record<string, unknown>;
      assert.deepEqual(
        [body.error, body.plan, body.used, body.limit],
        ['monthly quota exceeded', 'free', 2, 2],
      );
      assert.equal(site.hits.get('/') ?? 0, hitsBefore, 'nothing rendered');
      for (let i = 0; i < 5; i++) assert.equal((await get(one)).status, 302);
      assert.equal(await used(a.key), 2);
    });

    it('a link whose cache entry expired renders again and costs a unit', async () => {
      const a = await account(t, { plan: 'pro', key: true });
      const path = linkFor(a, '/?expiring');
      assert.equal((await get(path)).headers.get('x-cache'), 'MISS');
      assert.equal((await get(path)).headers.get('x-cache'), 'HIT');
      assert.equal(await used(a.key), 1);
      ahead += 16 * 60_000; // past the 15-minute cache
      const later = await get(path);
      assert.equal(later.status, 302);
      assert.equal(later.headers.get('x-cache'), 'MISS');
      assert.equal(await used(a.key), 2);
      assert.equal((await get(path)).headers.get('x-cache'), 'HIT');
      assert.equal(await used(a.key), 2);
    });

    it('quota stays exact: with 2 units left, 6 different links at once render exactly 2', async () => {
      const a = await account(t, { key: true }); // 2 units a month here
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, i) => get(linkFor(a, `/?burst=${i}`))),
      );
      const statuses = answers.map((r) => r.status).sort();
      assert.deepEqual(statuses, [302, 302, 402, 402, 402, 402]);
      assert.equal(await used(a.key), 2);
    });
  });
}

/** A page that takes a moment, so that identical link requests overlap its render. */
async function slowPage(_req: IncomingMessage, res: ServerResponse): Promise<void> {
  await sleep(500);
  res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>slow</h1>'));
}
