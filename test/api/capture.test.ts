import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { CaptureAnswer as Capture } from '../../src/domain/captures/capture-answer.ts';
import { captureScreenshot } from '../../src/domain/captures/capture-screenshot.ts';
import { isAppError } from '../../src/domain/errors.ts';
import { authenticateKey } from '../../src/domain/keys/authenticate-key.ts';
import { account } from '../helpers/accounts.ts';
import {
  createKey,
  describeEachDatabase,
  freePort,
  startApp,
  type TestApp,
} from '../helpers/app.ts';
import { type FixtureSite, imageSize, page, sleep, startSite } from '../helpers/fixtures.ts';

const HOUR = 3_600_000;

/** Captures through the real stack: Chromium, the egress proxy, storage and the database. */
describeEachDatabase('capture API', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  let slowRelease: (() => void) | undefined;
  let joinedRelease: (() => void) | undefined;
  let closedPort: number;

  before(async () => {
    site = await startSite({
      '/': page('<h1 style="font:40px sans-serif">Hello</h1>'),
      '/a': page('<p>a</p>'),
      '/b': page('<p>b</p>'),
      '/missing': (_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' }).end(page('<p>gone</p>'));
      },
      '/slow': async (_req, res) => {
        await new Promise<void>((resolve) => {
          slowRelease = resolve;
          setTimeout(resolve, 8_000);
        });
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>slow</p>'));
      },
      '/joined': async (_req, res) => {
        await new Promise<void>((resolve) => {
          joinedRelease = resolve;
          setTimeout(resolve, 8_000);
        });
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>joined</p>'));
      },
    });
    closedPort = await freePort();
    t = await startApp({
      db,
      // The closed port is allowlisted so the render itself fails to connect.
      env: {
        EGRESS_ALLOWLIST: `${site.hostPort},127.0.0.1:${closedPort}`,
        RENDER_CONCURRENCY: '2',
      },
      plans: { free: { rate_per_minute: 1000 }, pro: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t.close();
    await site.close();
  });

  const capture = (key: string, json: Record<string, unknown>) =>
    t.fetch('/v1/screenshots', { method: 'POST', json, headers: { 'x-api-key': key } });
  const usage = async (key: string) =>
    (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
      used: number;
      limit: number;
      remaining: number;
      plan: string;
      period_start: string;
      resets_at: string;
    };
  const fetchImage = async (imageUrl: string) => {
    const res = await fetch(imageUrl);
    return { res, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  it('captures on Free: 201 body, headers, hosted image with exact size, no id', async () => {
    const u = await account(t, { key: true });
    const started = Date.now();
    const res = await capture(u.key, { url: `${site.origin}/`, width: 800, height: 600 });
    assert.equal(res.status, 201, await res.clone().text());
    const body = (await res.json()) as Capture;
    assert.deepEqual(Object.keys(body).sort(), [
      'cached',
      'expires_at',
      'format',
      'height',
      'image_url',
      'quota',
      'warnings',
      'width',
    ]);
    assert.equal(body.cached, false);
    assert.deepEqual(body.warnings, []);
    assert.deepEqual(body.quota, { used: 1, limit: 100 });
    assert.deepEqual([body.format, body.width, body.height], ['png', 800, 600]);
    const expires = Date.parse(body.expires_at);
    assert.ok(Math.abs(expires - (started + 7 * 24 * HOUR)) < 60_000, body.expires_at);
    assert.match(body.image_url, new RegExp(`^${t.url}/images/[A-Za-z0-9_-]{22}\\.png$`));
    assert.equal(res.headers.get('x-cache'), 'MISS');
    assert.equal(res.headers.get('x-target-status'), '200');
    assert.ok(Number(res.headers.get('x-render-time-ms')) > 0);
    assert.equal(res.headers.get('x-ratelimit-limit'), '1000');

    const { res: img, bytes } = await fetchImage(body.image_url);
    assert.equal(img.status, 200);
    assert.equal(img.headers.get('content-type'), 'image/png');
    assert.equal(img.headers.get('x-content-type-options'), 'nosniff');
    const maxAge = Number(/max-age=(\d+)/.exec(img.headers.get('cache-control') ?? '')?.[1]);
    assert.ok(maxAge > 6 * 24 * 3600 && maxAge <= 7 * 24 * 3600, String(maxAge));
    assert.deepEqual(imageSize(bytes), { format: 'png', width: 800, height: 600 });
  });

  it('caps width and height at the plan maximum', async () => {
    const u = await account(t, { key: true });
    const res = await capture(u.key, {
      url: `${site.origin}/a`,
      width: 5000,
      height: 5000,
      format: 'jpeg',
    });
    assert.equal(res.status, 201);
    const body = (await res.json()) as Capture;
    assert.deepEqual([body.width, body.height], [1920, 1080]);
    const { bytes } = await fetchImage(body.image_url);
    assert.deepEqual(imageSize(bytes), { format: 'jpeg', width: 1920, height: 1080 });
  });

  it('caches per option and counts hits and misses on the quota', async () => {
    const u = await account(t, { key: true });
    const base = { url: `${site.origin}/b`, width: 400, height: 300 };
    const first = (await (await capture(u.key, base)).json()) as Capture;
    const hitRes = await capture(u.key, base);
    const hit = (await hitRes.json()) as Capture;
    assert.equal(hit.cached, true);
    assert.equal(hitRes.headers.get('x-cache'), 'HIT');
    assert.equal(hit.image_url, first.image_url);
    assert.equal(hit.expires_at, first.expires_at);
    assert.equal(hit.quota.used, 2);
    for (const change of [
      { width: 401 },
      { height: 301 },
      { format: 'jpeg' },
      { quality: 50 },
      { full_page: true },
      { dark_mode: true },
    ]) {
      const res = await capture(u.key, { ...base, ...change });
      assert.equal(res.status, 201);
      const b = (await res.json()) as Capture;
      assert.equal(b.cached, false, JSON.stringify(change));
      assert.notEqual(b.image_url, first.image_url);
    }
    assert.equal((await usage(u.key)).used, 8);
    // Another account never gets this account's cached image.
    const other = await account(t, { key: true });
    const theirs = (await (await capture(other.key, base)).json()) as Capture;
    assert.equal(theirs.cached, false);
    assert.notEqual(theirs.image_url, first.image_url);
  });

  it('a plan change is not answered from the cache of the other plan', async () => {
    const u = await account(t, { key: true });
    const opts = { url: `${site.origin}/a`, width: 320, height: 200 };
    const free = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(free.id, undefined);
    await t.deps.ctx.store.users.setPlan(u.id, 'pro', Date.now());
    const pro = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(pro.cached, false);
    assert.ok(Number.isInteger(pro.id), 'a Pro capture is a listable record');
    assert.ok(Math.abs(Date.parse(pro.expires_at) - (Date.now() + 30 * 24 * HOUR)) < 60_000);
    await t.deps.ctx.store.users.setPlan(u.id, 'free', Date.now());
    const back = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(back.id, undefined, 'Free never gets an id, even for a Pro-era image');
    assert.equal(back.cached, true);
    assert.equal(back.image_url, free.image_url);
  });

  it('Pro: webp at scale 2, fresh bypasses the cache, id present, 30-day retention', async () => {
    const u = await account(t, { plan: 'pro', key: true });
    const opts = {
      url: `${site.origin}/`,
      width: 300,
      height: 200,
      format: 'webp',
      device_scale_factor: 2,
    };
    const res = await capture(u.key, opts);
    assert.equal(res.status, 201, await res.clone().text());
    const body = (await res.json()) as Capture;
    assert.ok(Number.isInteger(body.id));
    assert.deepEqual([body.format, body.width, body.height], ['webp', 600, 400]);
    assert.deepEqual(body.quota, { used: 1, limit: 5000 });
    assert.ok(Math.abs(Date.parse(body.expires_at) - (Date.now() + 30 * 24 * HOUR)) < 60_000);
    const { bytes } = await fetchImage(body.image_url);
    assert.deepEqual(imageSize(bytes), { format: 'webp', width: 600, height: 400 });
    const cached = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(cached.cached, true);
    assert.equal(cached.id, body.id);
    const fresh = (await (await capture(u.key, { ...opts, fresh: true })).json()) as Capture;
    assert.equal(fresh.cached, false);
    assert.notEqual(fresh.id, body.id);
    // fresh replaced the cache entry.
    const after = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(after.cached, true);
    assert.equal(after.id, fresh.id);
  });

  it('reports the target status of an error page and still renders it', async () => {
    const u = await account(t, { key: true });
    const res = await capture(u.key, { url: `${site.origin}/missing`, width: 320, height: 240 });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-target-status'), '404');
  });

  it('gives exactly Q 201s of Q + 10 simultaneous captures and used == Q', async () => {
    const u = await account(t, { key: true });
    const q = 100;
    const already = 95;
    // Use up most of the month through the same atomic path.
    for (let i = 0; i < already; i++)
      await t.deps.ctx.store.quota.reserve(
        { userId: u.id, period: new Date().toISOString().slice(0, 7) },
        { limit: q },
      );
    const left = q - already;
    const results = await Promise.all(
      Array.from({ length: left + 10 }, () =>
        capture(u.key, { url: `${site.origin}/a`, width: 200, height: 200 }),
      ),
    );
    const statuses = results.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 201).length, left, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 402).length, 10);
    const u2 = await usage(u.key);
    assert.equal(u2.used, q);
    assert.equal(u2.remaining, 0);
    // Identical requests in flight at once render once: one MISS, the rest HITs.
    const bodies = (await Promise.all(
      results.filter((r) => r.status === 201).map((r) => r.json()),
    )) as Capture[];
    assert.equal(bodies.filter((b) => !b.cached).length, 1);
    assert.equal(new Set(bodies.map((b) => b.image_url)).size, 1);

    const refused = results.find((r) => r.status === 402);
    assert.ok(refused);
    const body = (await refused.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['error', 'limit', 'plan', 'resets_at', 'used']);
    assert.equal(body.error, 'monthly quota exceeded');
    assert.equal(body.plan, 'free');
    assert.equal(body.used, q);
    assert.equal(body.limit, q);
    const now = new Date();
    const nextMonth = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1),
    ).toISOString();
    assert.equal(body.resets_at, nextMonth);
    assert.equal(u2.resets_at, nextMonth);
    assert.ok(refused.headers.get('x-ratelimit-limit'), '402 carries the rate headers');
  });

  it('gives the quota unit back when the render fails', async () => {
    const u = await account(t, { key: true });
    const res = await capture(u.key, {
      url: `http://127.0.0.1:${closedPort}/`,
      width: 200,
      height: 200,
    });
    assert.equal(res.status, 502);
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(body.code, 'target_unreachable');
    assert.doesNotMatch(body.error, /at .*\.ts/);
    // A loopback port that is not allowlisted is refused before any render.
    const other = await freePort();
    const refused = await capture(u.key, { url: `http://127.0.0.1:${other}/` });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { code: string }).code, 'url_not_allowed');
    assert.equal((await usage(u.key)).used, 0);
  });

  it('ends an in-flight capture with 401 when its key is revoked, spending no quota', async () => {
    const u = await account(t, { key: true });
    const pending = capture(u.key, { url: `${site.origin}/slow`, width: 200, height: 200 });
    while (!site.hits.get('/slow')) await sleep(25);
    const revokedAt = Date.now();
    const del = await t.fetch(`/v1/keys/${u.keyId}`, { method: 'DELETE', cookie: u.cookie });
    assert.equal(del.status, 200);
    const res = await pending;
    assert.ok(Date.now() - revokedAt < 1_500, 'ended within about a second');
    slowRelease?.();
    assert.equal(res.status, 401);
    assert.equal(await res.text(), '{"error":"unauthorized"}');
    const k2 = await createKey(t, u.cookie);
    assert.equal((await usage(k2.key)).used, 0);
  });

  // A key revoked in the store only: no event reaches the bus, as when the revocation
  // landed between authentication and the capture's subscription, or its event was lost.
  it('refuses a joined capture whose key was revoked after authentication', async () => {
    const u = await account(t, { key: true });
    const k2 = await createKey(t, u.cookie);
    const opts = { url: `${site.origin}/joined`, width: 210, height: 210 };
    const leader = capture(k2.key, opts);
    while (!site.hits.get('/joined')) await sleep(25);
    const joined = capture(u.key, opts);
    // Past authentication once it holds its quota unit; it then joins the leader's render.
    while ((await usage(k2.key)).used < 2) await sleep(25);
    assert.ok(await t.deps.ctx.store.keys.revoke(u.id, u.keyId, Date.now()));
    joinedRelease?.();
    const [rl, rj] = await Promise.all([leader, joined]);
    assert.equal(rl.status, 201);
    assert.equal(rj.status, 401);
    assert.equal(await rj.text(), '{"error":"unauthorized"}');
    assert.equal((await usage(k2.key)).used, 1);
  });

  it('refuses a cache hit whose key was revoked after authentication', async () => {
    const u = await account(t, { key: true });
    const opts = { url: `${site.origin}/a`, width: 220, height: 220 };
    assert.equal((await capture(u.key, opts)).status, 201);
    const { user } = await authenticateKey(t.deps.ctx, { key: u.key });
    assert.ok(await t.deps.ctx.store.keys.revoke(u.id, u.keyId, Date.now()));
    await assert.rejects(
      captureScreenshot(t.deps.capture, { user, keyId: u.keyId, input: opts }),
      (err) => isAppError(err) && err.code === 'unauthorized',
    );
    const k2 = await createKey(t, u.cookie);
    assert.equal((await usage(k2.key)).used, 1);
    // The same request with a live key is the hit it was refused as.
    const { user: again } = await authenticateKey(t.deps.ctx, { key: k2.key });
    const hit = await captureScreenshot(t.deps.capture, { user: again, keyId: k2.id, input: opts });
    assert.equal(hit.cached, true);
  });

  it('lists Pro records newest first with cursor pagination; Free lists nothing', async () => {
    const u = await account(t, { plan: 'pro', key: true });
    const ids: number[] = [];
    for (const w of [210, 220, 230, 240, 250]) {
      const body = (await (
        await capture(u.key, { url: `${site.origin}/a`, width: w, height: 100 })
      ).json()) as Capture;
      ids.push(body.id as number);
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : '?limit=2';
      const res = await t.fetch(`/v1/screenshots${q}`, { headers: { 'x-api-key': u.key } });
      assert.equal(res.status, 200);
      const page = (await res.json()) as {
        data: Array<Record<string, unknown>>;
        has_more: boolean;
        next_cursor: string | null;
      };
      assert.ok(page.data.length <= 2);
      for (const item of page.data) {
        assert.deepEqual(Object.keys(item).sort(), [
          'created_at',
          'device_scale_factor',
          'expires_at',
          'format',
          'full_page',
          'height',
          'id',
          'image_url',
          'quality',
          'url',
          'width',
        ]);
        seen.push(item.id as number);
      }
      assert.equal(page.has_more, page.next_cursor !== null);
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, [...ids].reverse());
    const bad = await t.fetch('/v1/screenshots?limit=101', { headers: { 'x-api-key': u.key } });
    assert.equal(bad.status, 400);
    const badCursor = await t.fetch('/v1/screenshots?cursor=zzz', {
      headers: { 'x-api-key': u.key },
    });
    assert.equal(badCursor.status, 400);

    const f = await account(t, { key: true });
    await capture(f.key, { url: `${site.origin}/a`, width: 260, height: 100 });
    const freeList = (await (
      await t.fetch('/v1/screenshots', { headers: { 'x-api-key': f.key } })
    ).json()) as {
      data: unknown[];
      has_more: boolean;
      next_cursor: null;
    };
    assert.deepEqual(freeList, { data: [], has_more: false, next_cursor: null });
  });

  it('deletes a record: image 404s, the cache misses, other accounts get 404', async () => {
    const u = await account(t, { plan: 'pro', key: true });
    const opts = { url: `${site.origin}/b`, width: 333, height: 111 };
    const body = (await (await capture(u.key, opts)).json()) as Capture;
    const other = await account(t, { plan: 'pro', key: true });
    const theirs = await t.fetch(`/v1/screenshots/${body.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': other.key },
    });
    assert.equal(theirs.status, 404);
    assert.deepEqual(await theirs.json(), { error: 'screenshot not found' });
    const malformed = await t.fetch('/v1/screenshots/abc', {
      method: 'DELETE',
      headers: { 'x-api-key': u.key },
    });
    assert.equal(malformed.status, 400);
    assert.equal(((await malformed.json()) as { error: string }).error, 'invalid screenshot id');

    const del = await t.fetch(`/v1/screenshots/${body.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': u.key },
    });
    assert.equal(del.status, 200);
    assert.deepEqual(await del.json(), { success: true, message: 'screenshot deleted' });
    assert.equal((await fetch(body.image_url)).status, 404);
    const again = (await (await capture(u.key, opts)).json()) as Capture;
    assert.equal(again.cached, false);
    assert.notEqual(again.image_url, body.image_url);
  });

  it('sweeps expired records and images, and nothing else', async () => {
    const u = await account(t, { key: true });
    const body = (await (
      await capture(u.key, { url: `${site.origin}/a`, width: 150, height: 150 })
    ).json()) as Capture;
    const keep = (await (
      await capture(u.key, { url: `${site.origin}/b`, width: 150, height: 150 })
    ).json()) as Capture;
    const token = /images\/([^.]+)\./.exec(body.image_url)?.[1] ?? '';
    // Age one record past its retention.
    const record = await t.deps.ctx.store.screenshots.findByToken(token);
    assert.ok(record);
    await t.deps.database.db
      .updateTable('screenshots')
      .set({ expires_at: Date.now() - 1000 })
      .where('id', '=', record.id)
      .execute();
    assert.equal(
      (await fetch(body.image_url)).status,
      404,
      'expired image is 404 before the sweep',
    );
    const swept = await t.deps.sweep();
    assert.ok(swept >= 1);
    assert.equal(await t.deps.storage.get(`${token}.png`), null);
    assert.equal((await fetch(keep.image_url)).status, 200);
    assert.equal(await t.deps.sweep(), 0);
  });

  it('serves unknown or malformed image paths as 404', async () => {
    for (const p of [
      '/images/AAAAAAAAAAAAAAAAAAAAAA.png',
      '/images/..%2F..%2Fetc%2Fpasswd',
      '/images/x.exe',
    ]) {
      assert.equal((await t.fetch(p)).status, 404, p);
    }
  });
});
