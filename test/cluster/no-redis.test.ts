import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { createKey, withPg } from '../helpers/app.ts';
import { type Cluster, hit, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import type { NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';

const RATE = 5;

/**
 * Several nodes on PostgreSQL without Redis (the documented fallback): the per-minute and
 * demo limits live in the database and stay exact across nodes.
 */
describe('two nodes on PostgreSQL without Redis', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  let cluster: Cluster;
  let a: NodeProcess;
  let b: NodeProcess;
  let site: FixtureSite;

  before(async () => {
    site = await startSite({ '/': page('<p>demo</p>') });
    cluster = await startCluster({
      nodes: 2,
      redisUrl: null,
      plans: { free: { rate_per_minute: RATE } },
      env: { EGRESS_ALLOWLIST: site.hostPort },
    });
    [a, b] = cluster.nodes as [NodeProcess, NodeProcess];
  });
  after(async () => {
    await cluster?.close();
    await site?.close();
  });

  it('reports no Redis check and keeps a key rate exact across the nodes', async () => {
    const ready = (await (await a.fetch('/readyz')).json()) as { checks: Record<string, string> };
    assert.equal(ready.checks.redis, undefined);
    const { key } = await nodeAccount(a, { key: true });
    // rate + 10 at once, split over both nodes; an invalid body still draws on the rate.
    const results = await Promise.all(
      Array.from({ length: RATE + 10 }, (_, i) =>
        (i % 2 ? b : a).fetch('/v1/screenshots', {
          method: 'POST',
          json: {},
          headers: { 'x-api-key': key },
        }),
      ),
    );
    const codes = results.map((r) => r.status);
    assert.equal(codes.filter((s) => s === 400).length, RATE, codes.join(','));
    assert.equal(codes.filter((s) => s === 429).length, 10, codes.join(','));
  });

  it('keeps the demo allowance exact across the nodes', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 ? b : a).fetch('/demo/screenshot', {
          method: 'POST',
          json: { url: `${site.origin}/` },
        }),
      ),
    );
    const codes = results.map((r) => r.status);
    assert.equal(codes.filter((s) => s === 201).length, 5, codes.join(','));
    assert.equal(codes.filter((s) => s === 429).length, 3, codes.join(','));
  });
});

describe('revocation across two nodes on PostgreSQL without Redis (LISTEN/NOTIFY)', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  let cluster: Cluster;
  let a: NodeProcess;
  let b: NodeProcess;
  let site: FixtureSite;
  const held = new Map<string, () => void>();
  const hold = (path: string) => async (_req: unknown, res: import('node:http').ServerResponse) => {
    await new Promise<void>((resolve) => {
      held.set(path, resolve);
      setTimeout(resolve, 10_000);
    });
    res.writeHead(200, { 'content-type': 'text/html' }).end(page(`<p>${path}</p>`));
  };

  before(async () => {
    site = await startSite({
      '/': page('<p>cached</p>'),
      '/slow': hold('/slow'),
      '/joined': hold('/joined'),
      '/dropped': hold('/dropped'),
      '/forged': hold('/forged'),
    });
    cluster = await startCluster({
      nodes: 2,
      redisUrl: null,
      plans: { free: { rate_per_minute: 1000 } },
      env: { EGRESS_ALLOWLIST: site.hostPort },
    });
    [a, b] = cluster.nodes as [NodeProcess, NodeProcess];
  });
  after(async () => {
    for (const release of held.values()) release();
    await cluster?.close();
    await site?.close();
  });

  /** A new account (its session only) and a way to make it keys. */
  async function account() {
    const { cookie } = await nodeAccount(a);
    return { cookie, newKey: () => createKey(a, cookie) };
  }
  const capture = (node: NodeProcess, key: string, json: Record<string, unknown>) =>
    node.fetch('/v1/screenshots', { method: 'POST', json, headers: { 'x-api-key': key } });
  const used = async (key: string) =>
    (
      (await (await a.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;
  /** Revokes through A and waits for B's pending answer: its status and how long it took. */
  async function revokeThroughA(cookie: string, keyId: number, pending: Promise<Response>) {
    const revokedAt = Date.now();
    const del = await a.fetch(`/v1/keys/${keyId}`, { method: 'DELETE', cookie });
    assert.equal(del.status, 200);
    const res = await pending;
    return { res, took: Date.now() - revokedAt };
  }

  it('ends an in-flight capture on B with 401 when the key is revoked through A', async (t) => {
    const u = await account();
    const k = await u.newKey();
    const pending = capture(b, k.key, { url: `${site.origin}/slow`, width: 200, height: 200 });
    await hit(site, '/slow');
    const { res, took } = await revokeThroughA(u.cookie, k.id, pending);
    held.get('/slow')?.();
    assert.equal(res.status, 401);
    assert.equal(await res.text(), '{"error":"unauthorized"}');
    // Usually within a second of the revocation (the DELETE's own round trip included); the
    // bound leaves a busy machine room and stays well below the 10 s the page would have held
    // the render for without the event.
    assert.ok(took < 5_000, `ended ${took} ms after the revocation`);
    t.diagnostic(`401 ${took} ms after the revocation`);
    assert.equal(await used((await u.newKey()).key), 0);
  });

  it('a forged NOTIFY for an active key does not end its capture', async () => {
    const u = await account();
    const k = await u.newKey();
    const pending = capture(b, k.key, { url: `${site.origin}/forged`, width: 200, height: 200 });
    await hit(site, '/forged');
    // Any role on the database can NOTIFY; the event alone must not end the capture.
    await withPg((client) =>
      client.query('SELECT pg_notify($1, $2)', [
        'shotsmith_key_revoked',
        `${cluster.schema}|${k.id}`,
      ]),
    );
    // A real revocation ends a capture well within this (see above).
    await sleep(2_000);
    held.get('/forged')?.();
    const res = await pending;
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal(await used(k.key), 1);
  });

  it("ends a capture on B that joined another key's render, and serves no cache hit after", async (t) => {
    const u = await account();
    const [k1, k2] = [await u.newKey(), await u.newKey()];
    const opts = { url: `${site.origin}/joined`, width: 210, height: 210 };
    const leader = capture(b, k2.key, opts);
    await hit(site, '/joined');
    const joined = capture(b, k1.key, opts);
    // Past authentication once it holds its unit; it then joins the leader's render on B.
    while ((await used(k2.key)) < 2) await sleep(25);
    const { res, took } = await revokeThroughA(u.cookie, k1.id, joined);
    assert.equal(res.status, 401);
    assert.ok(took < 5_000, `ended ${took} ms after the revocation`);
    t.diagnostic(`401 ${took} ms after the revocation`);
    held.get('/joined')?.();
    const lead = await leader;
    assert.equal(lead.status, 201);
    assert.equal(await used(k2.key), 1);
    // The record is cached now; the revoked key gets no hit on either node.
    for (const node of [a, b]) {
      const again = await capture(node, k1.key, opts);
      assert.equal(again.status, 401);
    }
    assert.equal(
      ((await (await capture(a, k2.key, opts)).json()) as { cached: boolean }).cached,
      true,
    );
  });

  it('listens again after its LISTEN connection is dropped', async (t) => {
    const u = await account();
    const k = await u.newKey();
    // Every node's LISTEN connection of this cluster is cut by the server.
    const cut = await cluster.sql<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1`,
      [`shotsmith-revocations:${cluster.schema}`],
    );
    assert.equal(cut.length, 2, 'one LISTEN connection per node');
    // Back within the reconnect backoff.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const rows = await cluster.sql(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
        [`shotsmith-revocations:${cluster.schema}`],
      );
      if (rows.length === 2) break;
      assert.ok(Date.now() < deadline, 'LISTEN connections not back');
      await sleep(100);
    }
    const pending = capture(b, k.key, { url: `${site.origin}/dropped`, width: 230, height: 230 });
    await hit(site, '/dropped');
    const { res, took } = await revokeThroughA(u.cookie, k.id, pending);
    held.get('/dropped')?.();
    assert.equal(res.status, 401);
    assert.ok(took < 5_000, `ended ${took} ms after the revocation`);
    t.diagnostic(`401 ${took} ms after the revocation`);
  });
});
