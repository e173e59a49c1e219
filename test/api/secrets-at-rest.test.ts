/**
 * Credentials at rest (docs/security.md, "Credentials at rest"; issue 29): the
 * `headers`, `cookies` and `http_auth` of a capture are never written in the clear. The
 * cache key holds them only as an HMAC keyed from SERVER_SECRET; a queued async job keeps
 * them encrypted (AES-256-GCM) until it renders. Checked from outside: the whole database
 * (the SQLite files byte for byte, every PostgreSQL row), Redis (BullMQ's job data) and the
 * logs are searched for the secret strings while a job waits and after it ran.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { serviceSkip, TEST_REDIS_URL } from '../helpers/services.ts';
import { waitForJob } from '../helpers/webhooks.ts';

const VARIANTS = [
  { name: 'sqlite', db: 'sqlite', redis: false },
  { name: 'postgres', db: 'postgres', redis: false },
  { name: 'sqlite, BullMQ on Redis', db: 'sqlite', redis: true },
] as const;

/** Distinct, unlikely strings: any of them found anywhere is a leak. */
const SECRETS = {
  password: `pw-${randomBytes(9).toString('hex')}`,
  header: `hv-${randomBytes(9).toString('hex')}`,
  cookie: `cv-${randomBytes(9).toString('hex')}`,
};

const credentials = (password = SECRETS.password) => ({
  headers: { 'X-Token': SECRETS.header },
  cookies: [{ name: 'session', value: SECRETS.cookie }],
  http_auth: { username: 'alice', password },
});

for (const variant of VARIANTS) {
  describe(`credentials at rest [${variant.name}]`, async () => {
    const skip =
      (variant.db === 'postgres' && (await serviceSkip('postgres'))) ||
      (variant.redis && (await serviceSkip('redis')));
    if (skip) {
      it('skipped', { skip }, () => {});
      return;
    }
    let t: TestApp;
    let site: FixtureSite;
    const redisPrefix = `secrets-${randomBytes(4).toString('hex')}:`;
    // The /held page's requests, held open until release() (an async job mid-render).
    const held: Array<{ headers: IncomingHttpHeaders; answer: () => void }> = [];
    const release = () => {
      for (const request of held.splice(0)) request.answer();
    };
    before(async () => {
      site = await startSite({
        '/': page('<h1>private</h1>'),
        '/held': (req, res) =>
          new Promise<void>((resolve) => {
            held.push({
              headers: req.headers,
              answer: () => {
                res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>held</h1>'));
                resolve();
              },
            });
          }),
      });
      t = await startApp({
        db: variant.db,
        env: {
          EGRESS_ALLOWLIST: site.hostPort,
          SERVER_SECRET: randomBytes(24).toString('base64'),
          ...(variant.redis ? { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: redisPrefix } : {}),
        },
      });
    });
    after(async () => {
      release();
      await t?.close();
      await site?.close();
    });

    /** Everything the service keeps: database rows (or files), Redis keys, and its logs. */
    async function everythingStored(): Promise<string> {
      const parts: string[] = [t.logs.join('\n')];
      if (variant.db === 'sqlite') {
        // The files as bytes (the main file, the WAL): free pages and old versions included.
        for (const name of await readdir(t.dataDir)) {
          if (!name.startsWith('shotsmith.sqlite')) continue;
          parts.push((await readFile(path.join(t.dataDir, name))).toString('latin1'));
        }
      } else {
        const db = t.deps.database.db;
        const tables = await sql<{ table_name: string }>`
          SELECT table_name FROM information_schema.tables
          WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(db);
        assert.ok(tables.rows.some((r) => r.table_name === 'capture_jobs'));
        for (const { table_name } of tables.rows) {
          const rows = await sql<{ row: string }>`
            SELECT r::text AS row FROM ${sql.table(table_name)} r`.execute(db);
          parts.push(...rows.rows.map((r) => r.row));
        }
      }
      if (variant.redis) parts.push(await redisDump(redisPrefix));
      return parts.join('\n');
    }
    const assertNoSecret = async (when: string) => {
      const stored = await everythingStored();
      for (const [what, secret] of Object.entries(SECRETS)) {
        assert.ok(!stored.includes(secret), `the ${what} is stored in the clear ${when}`);
      }
    };

    it('a sync capture keys its cache by an HMAC: hits for the same request, misses for another password', async () => {
      const key = await newApiKey(t);
      const first = await postCapture(t, key, { url: `${site.origin}/`, ...credentials() });
      assert.equal(first.status, 201, await first.clone().text());
      assert.equal(((await first.json()) as { cached: boolean }).cached, false);
      const again = await postCapture(t, key, { url: `${site.origin}/`, ...credentials() });
      assert.equal(((await again.json()) as { cached: boolean }).cached, true);
      const other = await postCapture(t, key, {
        url: `${site.origin}/`,
        ...credentials(`${SECRETS.password}-other`),
      });
      assert.equal(other.status, 201);
      assert.equal(((await other.json()) as { cached: boolean }).cached, false);
      await assertNoSecret('after sync captures');
    });

    it('an async job keeps its credentials encrypted while it waits, and renders with them', async () => {
      const key = await newApiKey(t, { plan: 'pro' });
      const queued = await postCapture(t, key, {
        url: `${site.origin}/held`,
        async: true,
        ...credentials(),
      });
      assert.equal(queued.status, 202, await queued.clone().text());
      const { status_url: statusUrl } = (await queued.json()) as { status_url: string };
      // The job is rendering: its row is still open, with what it needs to render.
      for (let i = 0; held.length === 0; i++) {
        assert.ok(i < 600, 'the job reached the page');
        await sleep(100);
      }
      await assertNoSecret('while the job renders');
      // The page got the credentials: the job's row gave them back to the render.
      const [request] = held;
      assert.equal(request?.headers['x-token'], SECRETS.header);
      assert.match(String(request?.headers.cookie), new RegExp(`session=${SECRETS.cookie}`));
      release();
      const done = await waitForJob(statusUrl, key);
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      await assertNoSecret('after the job');
    });
  });
}

/** Every value under the prefix, whatever its type (BullMQ keeps hashes, lists, sets). */
async function redisDump(prefix: string): Promise<string> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    const out: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', '500');
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        out.push(key);
        if (type === 'string') out.push(String(await redis.get(key)));
        else if (type === 'hash') out.push(JSON.stringify(await redis.hgetall(key)));
        else if (type === 'list') out.push(JSON.stringify(await redis.lrange(key, 0, -1)));
        else if (type === 'set') out.push(JSON.stringify(await redis.smembers(key)));
        else if (type === 'zset') out.push(JSON.stringify(await redis.zrange(key, '0', '-1')));
        else if (type === 'stream') out.push(JSON.stringify(await redis.xrange(key, '-', '+')));
      }
    } while (cursor !== '0');
    assert.ok(out.length > 0, 'BullMQ keeps its queue under the prefix');
    return out.join('\n');
  } finally {
    redis.disconnect();
  }
}
