import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { hashApiKey } from '../../src/domain/api-key-format.ts';
import type { CaptureAnswer as Capture } from '../../src/domain/captures/capture-answer.ts';
import type { ScreenshotRecord } from '../../src/domain/store.ts';
import { dayBounds, monthBounds } from '../../src/lib/time.ts';
import { account, type KeyedAccount, revokeSilently } from '../helpers/accounts.ts';
import { type DbKind, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { serviceSkip, TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const QUOTA = 40;

/**
 * The cache-hit path and the rules it keeps (docs/security.md, "Revocation";
 * docs/plans-and-limits.md): the key read with the cache lookup, reservations of one
 * account grouped into shared writes, the usage chart counted with the reservation. Through
 * the real HTTP surface on SQLite, PostgreSQL, and PostgreSQL with Redis.
 */
const VARIANTS: Array<{ name: string; db: DbKind; redis: boolean }> = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  { name: 'postgres', db: 'postgres', redis: false },
  { name: 'postgres + redis', db: 'postgres', redis: true },
];

for (const variant of VARIANTS) {
  describe(`cache-hit path [${variant.name}]`, async () => {
    const skip =
      (variant.db === 'postgres' && (await serviceSkip('postgres'))) ||
      (variant.redis && (await serviceSkip('redis')));
    if (skip) {
      describe('skipped', { skip }, () => {});
      return;
    }
    let t: TestApp;
    let site: FixtureSite;
    /**
     * Runs once, synchronously, inside the app's clock call it was armed for. Only the
     * capture request's own calls count (the key hook's, the cache lookup's): the async
     * workers' poll and the sweeps read the clock too, and one of them landing between
     * arming and the request moved the revocation before authentication (a suite run).
     */
    let armed: { calls: number; run: () => void } | null = null;
    const REQUEST_PATH = /[/\\](authenticate-key|run-capture)\.ts:/;
    const clock = () => {
      if (armed && REQUEST_PATH.test(new Error().stack ?? '') && --armed.calls === 0) {
        const { run } = armed;
        armed = null;
        run();
      }
      return Date.now();
    };

    before(async () => {
      site = await startSite({ '/': page('<h1>hit</h1>'), '/never': page('<p>never</p>') });
      t = await startApp({
        db: variant.db,
        clock,
        env: {
          EGRESS_ALLOWLIST: site.hostPort,
          // No async workers: their polls of the database (every 500 ms on PostgreSQL
          // without Redis) would land among the statements a test counts.
          ASYNC_WORKERS: '0',
          ...(variant.redis
            ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: `hits-${randomBytes(4).toString('hex')}:` }
            : {}),
        },
        plans: { free: { monthly_quota: QUOTA, rate_per_minute: 1000 } },
      });
    });
    after(async () => {
      await t?.close();
      await site?.close();
    });

    const body = (url: string) => ({ url, width: 300, height: 200 });
    const capture = (key: string, url = `${site.origin}/`) =>
      t.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: body(url),
      });
    async function usage(cookie: string): Promise<{ used: number; days: number }> {
      const res = await t.fetch('/v1/account/usage', { cookie });
      assert.equal(res.status, 200);
      const u = (await res.json()) as { used: number; days: Array<{ count: number }> };
      return { used: u.used, days: u.days.reduce((sum, d) => sum + d.count, 0) };
    }

    /**
     * Revokes the key in the database from outside the app and synchronously (no event
     * published: the case of a lost event), so that it lands exactly between two steps of
     * one request.
     */
    async function revokerFor(keyId: number): Promise<() => void> {
      if (variant.db === 'sqlite') return () => revokeSilently(t, keyId);
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(
        t.deps.database.db,
      );
      const schema = rows[0]?.schema as string;
      return () => {
        const child = spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `import pg from 'pg';
             const c = new pg.Client({ connectionString: process.argv[1], options: '-c search_path=' + process.argv[2] });
             await c.connect();
             const r = await c.query('UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [Date.now(), Number(process.argv[3])]);
             await c.end();
             if (r.rowCount !== 1) process.exit(3);`,
            TEST_DATABASE_URL,
            schema,
            String(keyId),
          ],
          { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
        );
        assert.equal(child.status, 0, `revoking from outside failed: ${child.stderr}`);
      };
    }

    it('refuses a cache hit whose key was revoked after authentication, and returns its unit', async () => {
      const u = await account(t, { key: true });
      const first = await capture(u.key);
      assert.equal(first.status, 201, await first.text());
      const hit = await capture(u.key);
      assert.equal(hit.status, 201);
      assert.equal(((await hit.json()) as Capture).cached, true);
      assert.deepEqual(await usage(u.cookie), { used: 2, days: 2 });

      // The request's clock calls: the key hook's (after the key was read), then the cache
      // lookup's, taken before its statement is sent. The key is revoked at the second,
      // between authentication and the cache lookup that would answer.
      armed = { calls: 2, run: await revokerFor(u.keyId) };
      const refused = await capture(u.key);
      assert.equal(armed, null, 'the revocation ran inside the request');
      assert.equal(refused.status, 401);
      assert.deepEqual(await refused.json(), { error: 'unauthorized' });
      // It got past authentication and the per-minute rate (whose headers it carries): the
      // refusal is the check before the answer, not the key hook.
      assert.ok(refused.headers.get('x-ratelimit-limit'), 'refused after the rate limit');
      // The unit it reserved is back, in the month and in the day.
      assert.deepEqual(await usage(u.cookie), { used: 2, days: 2 });
      // And the next request is refused by the key hook itself.
      const next = await capture(u.key);
      assert.equal(next.status, 401);
      assert.equal(next.headers.get('x-ratelimit-limit'), null);
    });

    it('refuses a miss of a key revoked after authentication before any render', async () => {
      const u = await account(t, { key: true });
      armed = { calls: 2, run: await revokerFor(u.keyId) };
      const refused = await capture(u.key, `${site.origin}/never`);
      assert.equal(armed, null);
      assert.equal(refused.status, 401);
      assert.ok(refused.headers.get('x-ratelimit-limit'));
      assert.deepEqual(await usage(u.cookie), { used: 0, days: 0 });
      assert.equal(site.hits.get('/never'), undefined, 'no render was started');
    });

    it('answers concurrent hits of several accounts each from its own record', async () => {
      // Reads of one event-loop turn are batched on PostgreSQL: every answer must still be
      // the asking account's own record, and a revoked key among them refused.
      const accounts: KeyedAccount[] = [];
      for (let i = 0; i < 4; i++) accounts.push(await account(t, { key: true }));
      const own = new Map<string, string>();
      for (const a of accounts) {
        const res = await capture(a.key);
        const text = await res.text();
        assert.equal(res.status, 201, text);
        own.set(a.key, (JSON.parse(text) as { image_url: string }).image_url);
      }
      assert.equal(new Set(own.values()).size, accounts.length, 'one record per account');
      const gone = accounts[3] as (typeof accounts)[number];
      const del = await t.fetch(`/v1/keys/${gone.keyId}`, {
        method: 'DELETE',
        cookie: gone.cookie,
      });
      assert.equal(del.status, 200, await del.text());

      const n = 40;
      const keys = Array.from({ length: n }, (_, i) => (accounts[i % 4] as typeof gone).key);
      const answers = await Promise.all(keys.map((key) => capture(key)));
      for (const [i, res] of answers.entries()) {
        const key = keys[i] as string;
        if (key === gone.key) {
          assert.equal(res.status, 401, `request ${i}`);
          await res.body?.cancel();
          continue;
        }
        assert.equal(res.status, 201, `request ${i}`);
        const answer = (await res.json()) as { image_url: string; cached: boolean };
        assert.equal(answer.cached, true);
        assert.equal(answer.image_url, own.get(key), `request ${i} got its own account's record`);
      }
    });

    it('reads the keys and cache entries asked for in one turn together, each its own', async () => {
      const accounts: KeyedAccount[] = [];
      for (let i = 0; i < 3; i++) accounts.push(await account(t, { key: true }));
      const records: ScreenshotRecord[] = [];
      for (const a of accounts) {
        const res = await capture(a.key);
        const { image_url } = (await res.json()) as { image_url: string };
        const token = new URL(image_url).pathname.split('/').at(-1)?.split('.')[0] as string;
        const record = await t.deps.ctx.store.screenshots.findByToken(token);
        assert.ok(record?.cacheKey);
        records.push(record);
      }
      const revoked = accounts[2] as (typeof accounts)[number];
      const del = await t.fetch(`/v1/keys/${revoked.keyId}`, {
        method: 'DELETE',
        cookie: revoked.cookie,
      });
      assert.equal(del.status, 200);

      const store = t.deps.ctx.store;
      const now = Date.now();
      const before = t.deps.database.queryCount();
      // Every key with every account's entry: the answers differ in both halves.
      const pairs = accounts.flatMap((a) => records.map((r) => ({ a, r })));
      const [found, cached] = await Promise.all([
        Promise.all(accounts.map((a) => store.keys.findActiveByHash(hashApiKey(a.key)))),
        Promise.all(
          pairs.map(({ a, r }) =>
            store.screenshots.findCachedForKey({
              cacheKey: r.cacheKey as string,
              since: now - 60_000,
              now,
              keyId: a.keyId,
            }),
          ),
        ),
      ]);
      const statements = t.deps.database.queryCount() - before;
      assert.deepEqual(
        found.map((f) => f?.user.id ?? null),
        [accounts[0]?.id, accounts[1]?.id, null],
      );
      for (const [i, { a, r }] of pairs.entries()) {
        assert.equal(cached[i]?.record?.id, r.id, `lookup ${i}: the entry asked for`);
        assert.equal(cached[i]?.keyActive, a !== revoked, `lookup ${i}: its own key's state`);
      }
      if (variant.db === 'postgres') {
        assert.equal(statements, 2, 'one statement for the keys, one for the lookups');
      }
    });

    it('gives concurrent hits exactly the quota, each its own count, the days adding up', async () => {
      const u = await account(t, { key: true });
      const first = await capture(u.key);
      assert.equal(first.status, 201, await first.text());
      const n = QUOTA + 15;
      const answers = await Promise.all(Array.from({ length: n }, () => capture(u.key)));
      const ok: number[] = [];
      let refused = 0;
      for (const res of answers) {
        if (res.status === 201) ok.push(((await res.json()) as Capture).quota.used);
        else {
          assert.equal(res.status, 402);
          await res.body?.cancel();
          refused++;
        }
      }
      assert.equal(ok.length, QUOTA - 1);
      assert.equal(refused, n - (QUOTA - 1));
      // Grouped reservations still report one distinct count per answer.
      assert.deepEqual(
        ok.sort((a, b) => a - b),
        Array.from({ length: QUOTA - 1 }, (_, i) => i + 2),
      );
      assert.deepEqual(await usage(u.cookie), { used: QUOTA, days: QUOTA });
    });

    it('groups concurrent reservations of one account into shared writes, exactly', async () => {
      const u = await account(t, { key: true });
      const quota = t.deps.ctx.store.quota;
      const now = Date.now();
      const period = monthBounds(now).key;
      const day = dayBounds(now).key;
      const before = t.deps.database.queryCount();
      const used = await Promise.all(
        Array.from({ length: 20 }, () =>
          quota.reserve({ userId: u.id, period, day }, { limit: 1000 }),
        ),
      );
      assert.deepEqual(
        [...used].sort((a, b) => (a ?? 0) - (b ?? 0)),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      // 20 reservations asked for in one turn: two writes on PostgreSQL (the first, then
      // the 19 that queued behind it), one transaction of two statements on SQLite.
      assert.ok(t.deps.database.queryCount() - before <= 4, 'grouped into a few writes');
      // Over the limit: exactly the units left, whatever the grouping.
      const more = await Promise.all(
        Array.from({ length: 15 }, () =>
          quota.reserve({ userId: u.id, period, day }, { limit: 25 }),
        ),
      );
      assert.equal(more.filter((x) => x !== null).length, 5);
      assert.equal(await quota.used(u.id, period), 25);
      assert.deepEqual(await quota.days(u.id, day, day), [{ day, count: 25 }]);
      await quota.release({ userId: u.id, period, day });
      assert.equal(await quota.used(u.id, period), 24);
      assert.deepEqual(await quota.days(u.id, day, day), [{ day, count: 24 }]);
    });

    if (variant.db === 'sqlite') {
      it('never runs a hot-path write inside a transaction held on the connection', async () => {
        const u = await account(t, { key: true });
        const store = t.deps.ctx.store;
        const now = Date.now();
        const period = monthBounds(now).key;
        let pending: Promise<number | null> | undefined;
        await assert.rejects(
          store.transaction(async (tx) => {
            await tx.users.setPlan(u.id, 'pro', now);
            // Asked for on the root store while this transaction holds the connection.
            pending = store.quota.reserve(
              { userId: u.id, period, day: dayBounds(now).key },
              { limit: 10 },
            );
            await new Promise((resolve) => setTimeout(resolve, 50));
            throw new Error('roll back');
          }),
          /roll back/,
        );
        // The rollback took the plan change, not the reservation, which waited for it.
        assert.equal(await pending, 1);
        assert.equal(await store.quota.used(u.id, period), 1);
        assert.equal((await store.users.findById(u.id))?.plan, 'free');
      });
    }
  });
}
