import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, hit, startCluster, waitReady } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import type { NodeProcess } from '../helpers/node-process.ts';
import { type RedisServer, startRedisServer } from '../helpers/redis-server.ts';
import { serviceSkip, TEST_DATABASE_URL } from '../helpers/services.ts';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

/**
 * A node whose Redis (a private redis-server), PostgreSQL (reached through a TCP proxy that
 * can cut it off) and S3-compatible store each go away and come back mid-test: 503 with
 * Retry-After while one is gone, never a silent unlimited mode, nothing half-written, and
 * service back without a restart.
 */
describe('dependency outages', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }

  let redis: RedisServer;
  let pgProxy: TcpProxy;
  let cluster: Cluster;
  let node: NodeProcess;
  let site: FixtureSite;
  let release: (() => void) | undefined;
  let user: { key: string; cookie: string; id: number };

  before(async () => {
    site = await startSite({
      '/': page('<p>up</p>'),
      '/slow': async (_req: unknown, res: ServerResponse) => {
        await new Promise<void>((resolve) => {
          release = resolve;
          setTimeout(resolve, 10_000);
        });
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>slow</p>'));
      },
    });
    redis = await startRedisServer();
    const pgUrl = new URL(TEST_DATABASE_URL);
    pgProxy = await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    pgUrl.port = String(pgProxy.port);
    cluster = await startCluster({
      nodes: 1,
      redisUrl: redis.url,
      databaseUrl: pgUrl.toString(),
      plans: { free: { rate_per_minute: 1000 } },
      env: { EGRESS_ALLOWLIST: site.hostPort },
    });
    node = cluster.nodes[0] as NodeProcess;
    user = await nodeAccount(node, { key: true });
  });
  after(async () => {
    release?.();
    await cluster?.close();
    await redis?.stop();
    await pgProxy?.stop();
    await site?.close();
  });

  let width = 200;
  /** A capture that is never a cache hit, so it goes all the way to storage. */
  const capture = (path = '/') =>
    node.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url: `${site.origin}${path}`, width: width++, height: 100 },
      headers: { 'x-api-key': user.key },
    });
  const demo = () =>
    node.fetch('/demo/screenshot', { method: 'POST', json: { url: `${site.origin}/` } });
  /** Read in the database: GET /v1/usage itself answers 503 while Redis is away. */
  const used = async () => {
    const rows = await cluster.sql<{ used: number }>(
      'SELECT used FROM usage_months WHERE user_id = $1',
      [user.id],
    );
    return Number(rows[0]?.used ?? 0);
  };
  const readiness = async () => {
    const res = await node.fetch('/readyz');
    return {
      status: res.status,
      checks: ((await res.json()) as { checks: Record<string, string> }).checks,
    };
  };
  async function eventually(what: string, fn: () => Promise<boolean>, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!(await fn())) {
      assert.ok(Date.now() < deadline, `${what} within ${ms} ms`);
      await sleep(100);
    }
  }
  const assertUnavailable = async (res: Response, code: string) => {
    assert.equal(res.status, 503);
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(body.code, code);
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
  };

  it('Redis down: the limiter answers 503 with Retry-After, /readyz says so; back by itself', async () => {
    assert.equal((await capture()).status, 201);
    assert.equal((await demo()).status, 201);
    const before = await used();

    await redis.stop();
    await assertUnavailable(await capture(), 'overloaded');
    await assertUnavailable(await demo(), 'overloaded');
    const ready = await readiness();
    assert.equal(ready.status, 503);
    assert.notEqual(ready.checks.redis, 'ok');
    assert.equal(ready.checks.database, 'ok');
    assert.equal(await used(), before, 'refused captures spent no quota');
    const usage = await node.fetch('/v1/usage', { headers: { 'x-api-key': user.key } });
    assert.equal(usage.status, 503, 'the other per-minute limit fails closed too');

    await redis.start(); // same port, empty: the node reconnects on its own
    await eventually('captures resume', async () => (await capture()).status === 201);
    assert.equal((await demo()).status, 201);
    await waitReady([node], 5_000);
    assert.equal((await readiness()).checks.redis, 'ok');
  });

  it('PostgreSQL down: 503, nothing half-written, the unit given back once it returns', async () => {
    const before = await used();
    const images = async () =>
      Number((await cluster.sql<{ n: string }>('SELECT count(*) AS n FROM screenshots'))[0]?.n);
    const records = await images();
    // A capture in flight when the database goes away: its unit is reserved, its render held.
    const pending = capture('/slow');
    await hit(site, '/slow');
    await pgProxy.stop();
    release?.();
    await assertUnavailable(await pending, 'overloaded');
    await assertUnavailable(await capture(), 'overloaded');
    const ready = await readiness();
    assert.equal(ready.status, 503);
    assert.notEqual(ready.checks.database, 'ok');

    await pgProxy.start();
    await eventually('captures resume', async () => (await capture()).status === 201);
    // The in-flight capture's unit came back, and it left no record behind.
    await eventually('the unit is given back', async () => (await used()) === before + 1);
    assert.equal(await images(), records + 1);
    await waitReady([node], 5_000);
  });

  it('S3 down: storage_error with the quota unit returned; back once it returns', async () => {
    const before = await used();
    await cluster.s3.stop();
    const res = await capture();
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { code: string }).code, 'storage_error');
    assert.equal(await used(), before);
    assert.equal((await readiness()).checks.storage === 'ok', false);

    await cluster.s3.start();
    await eventually('captures resume', async () => (await capture()).status === 201);
    assert.equal(await used(), before + 1);
    await waitReady([node], 5_000);
  });
});
