import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CaptureAnswer as Capture } from '../../src/domain/captures/capture-answer.ts';
import { nodeAccount } from '../helpers/accounts.ts';
import { createKey } from '../helpers/app.ts';
import { type Cluster, hit, scrape, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import type { NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';

const FREE_RATE = 5;
const PRO_QUOTA = 6;

/**
 * Two nodes as real processes behind no proxy, sharing the machine's PostgreSQL and Redis
 * and a local S3-compatible store: what a client sees must not depend on the node it hits
 * (docs/deployment.md, "Scale-out").
 */
describe('two nodes', async () => {
  const skip = (await serviceSkip('postgres')) || (await serviceSkip('redis'));
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }

  let cluster: Cluster;
  let a: NodeProcess;
  let b: NodeProcess;
  let site: FixtureSite;
  const held = new Map<string, () => void>();
  /** Every status POST /v1/screenshots answered, to compare with the nodes' metrics. */
  const statuses: number[] = [];
  const hold = (path: string) => async (_req: unknown, res: import('node:http').ServerResponse) => {
    await new Promise<void>((resolve) => {
      held.set(path, resolve);
      setTimeout(resolve, 10_000);
    });
    res.writeHead(200, { 'content-type': 'text/html' }).end(page(`<p>${path}</p>`));
  };

  before(async () => {
    site = await startSite({
      '/': page('<h1 style="font:40px sans-serif">Hello</h1>'),
      '/a': page('<p>a</p>'),
      '/b': page('<p>b</p>'),
      '/slow': hold('/slow'),
      '/together': hold('/together'),
      '/elsewhere': hold('/elsewhere'),
    });
    cluster = await startCluster({
      nodes: 2,
      plans: {
        free: { rate_per_minute: FREE_RATE },
        pro: { monthly_quota: PRO_QUOTA, rate_per_minute: 1000 },
      },
      env: { EGRESS_ALLOWLIST: site.hostPort, SWEEP_INTERVAL_MS: '1000' },
    });
    [a, b] = cluster.nodes as [NodeProcess, NodeProcess];
  });
  after(async () => {
    for (const release of held.values()) release();
    await cluster?.close();
    await site?.close();
  });

  const capture = async (node: NodeProcess, key: string, json: Record<string, unknown>) => {
    const res = await node.fetch('/v1/screenshots', {
      method: 'POST',
      json,
      headers: { 'x-api-key': key },
    });
    statuses.push(res.status);
    return res;
  };
  const usage = async (node: NodeProcess, key: string) =>
    (await (await node.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
      used: number;
      remaining: number;
    };
  const path = (imageUrl: string) => new URL(imageUrl).pathname;

  it('both nodes are ready with Redis among the checks', async () => {
    for (const node of [a, b]) {
      const res = await node.fetch('/readyz');
      assert.equal(res.status, 200);
      const body = (await res.json()) as { checks: Record<string, string> };
      assert.equal(body.checks.redis, 'ok');
      assert.equal(body.checks.database, 'ok');
      assert.equal(body.checks.storage, 'ok');
    }
  });

  it('applies one per-minute rate across both nodes: alternated, then rate + 10 at once', async () => {
    const u = await nodeAccount(a, { key: true });
    // Requests alternate between the nodes; an invalid body still draws on the rate.
    const remaining: string[] = [];
    for (let i = 0; i < FREE_RATE; i++) {
      const res = await capture(i % 2 ? b : a, u.key, {});
      assert.equal(res.status, 400, `request ${i + 1}`);
      remaining.push(res.headers.get('x-ratelimit-remaining') ?? '');
    }
    assert.deepEqual(remaining, ['4', '3', '2', '1', '0']);
    for (const node of [a, b]) {
      const res = await capture(node, u.key, {});
      assert.equal(res.status, 429);
      const body = (await res.json()) as Record<string, unknown>;
      assert.equal(body.used, FREE_RATE);
      assert.equal(body.limit, FREE_RATE);
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }

    // A fresh account: rate + 10 simultaneous captures split over the nodes.
    const v = await nodeAccount(a, { key: true });
    const results = await Promise.all(
      Array.from({ length: FREE_RATE + 10 }, (_, i) =>
        capture(i % 2 ? b : a, v.key, { url: `${site.origin}/a`, width: 320, height: 240 }),
      ),
    );
    const codes = results.map((r) => r.status);
    assert.equal(codes.filter((s) => s === 201).length, FREE_RATE, codes.join(','));
    assert.equal(codes.filter((s) => s === 429).length, 10, codes.join(','));
    assert.equal((await usage(b, v.key)).used, FREE_RATE);
  });

  it('keeps the monthly quota exact across both nodes and renders the page once', async () => {
    const u = await nodeAccount(a, { plan: 'pro', cluster, key: true });
    const before = site.hits.get('/b') ?? 0;
    const results = await Promise.all(
      Array.from({ length: PRO_QUOTA + 10 }, (_, i) =>
        capture(i % 2 ? b : a, u.key, { url: `${site.origin}/b`, width: 300, height: 200 }),
      ),
    );
    const codes = results.map((r) => r.status);
    assert.equal(codes.filter((s) => s === 201).length, PRO_QUOTA, codes.join(','));
    assert.equal(codes.filter((s) => s === 402).length, 10, codes.join(','));
    const bodies = (await Promise.all(
      results.filter((r) => r.status === 201).map((r) => r.json()),
    )) as Capture[];
    assert.equal(bodies.filter((x) => !x.cached).length, 1, 'one render for all of them');
    assert.equal(new Set(bodies.map((x) => path(x.image_url))).size, 1);
    assert.equal((site.hits.get('/b') ?? 0) - before, 1);
    for (const node of [a, b]) {
      const q = await usage(node, u.key);
      assert.equal(q.used, PRO_QUOTA);
      assert.equal(q.remaining, 0);
    }
  });

  it('renders identical captures in flight on both nodes once', async () => {
    const u = await nodeAccount(a, { plan: 'pro', cluster, key: true });
    const opts = { url: `${site.origin}/together`, width: 310, height: 210 };
    const first = capture(a, u.key, opts);
    await hit(site, '/together');
    const second = capture(b, u.key, opts);
    await sleep(500); // B is waiting on A's render lock by now
    held.get('/together')?.();
    const [ra, rb] = await Promise.all([first, second]);
    assert.equal(ra.status, 201);
    assert.equal(rb.status, 201);
    const [ba, bb] = (await Promise.all([ra.json(), rb.json()])) as [Capture, Capture];
    assert.equal(ba.cached, false);
    assert.equal(bb.cached, true);
    assert.equal(rb.headers.get('x-cache'), 'HIT');
    assert.equal(ba.id, bb.id);
    assert.equal(path(ba.image_url), path(bb.image_url));
    assert.equal(site.hits.get('/together'), 1);
  });

  it('ends an in-flight capture on B with 401 when the key is revoked through A', async () => {
    const u = await nodeAccount(a, { key: true });
    const pending = capture(b, u.key, { url: `${site.origin}/slow`, width: 200, height: 200 });
    await hit(site, '/slow');
    const revokedAt = Date.now();
    const del = await a.fetch(`/v1/keys/${u.keyId}`, { method: 'DELETE', cookie: u.cookie });
    assert.equal(del.status, 200);
    const res = await pending;
    const took = Date.now() - revokedAt;
    held.get('/slow')?.();
    assert.equal(res.status, 401);
    assert.equal(await res.text(), '{"error":"unauthorized"}');
    // Usually within a second of the revocation (the DELETE's own round trip included); the
    // bound leaves a busy machine room and stays well below the 10 s the page would have held
    // the render for without the event.
    assert.ok(took < 5_000, `ended ${took} ms after the revocation`);
    // Refused at once on both nodes afterwards, and the quota unit came back.
    assert.equal((await capture(a, u.key, { url: `${site.origin}/` })).status, 401);
    const k2 = await createKey(a, u.cookie);
    assert.equal((await usage(b, k2.key)).used, 0);
  });

  it("refuses B's answer from A's render when the key was revoked with no event", async () => {
    const u = await nodeAccount(a, { key: true });
    const k2 = await createKey(a, u.cookie);
    const opts = { url: `${site.origin}/elsewhere`, width: 240, height: 240 };
    const onA = capture(a, k2.key, opts);
    await hit(site, '/elsewhere');
    // B finds A's render lock taken and waits for A's record: a cached answer.
    const onB = capture(b, u.key, opts);
    while ((await usage(a, k2.key)).used < 2) await sleep(25);
    // Revoked in the database only, as when the broadcast was lost.
    await cluster.sql('UPDATE api_keys SET revoked_at = $1 WHERE id = $2', [Date.now(), u.keyId]);
    held.get('/elsewhere')?.();
    const [ra, rb] = await Promise.all([onA, onB]);
    assert.equal(ra.status, 201);
    assert.equal(((await ra.json()) as Capture).cached, false);
    assert.equal(rb.status, 401);
    assert.equal(await rb.text(), '{"error":"unauthorized"}');
    assert.equal((await usage(b, k2.key)).used, 1);
    assert.equal(site.hits.get('/elsewhere'), 1, 'B waited for A instead of rendering');
  });

  it('serves a capture made on A as a cache hit on B, with B serving the image', async () => {
    const u = await nodeAccount(a, { key: true });
    const opts = { url: `${site.origin}/`, width: 640, height: 360 };
    const ra = await capture(a, u.key, opts);
    assert.equal(ra.status, 201);
    const ca = (await ra.json()) as Capture;
    assert.equal(ca.cached, false);
    const rb = await capture(b, u.key, opts);
    const cb = (await rb.json()) as Capture;
    assert.equal(cb.cached, true);
    assert.equal(rb.headers.get('x-cache'), 'HIT');
    assert.equal(path(cb.image_url), path(ca.image_url));
    assert.ok(cb.image_url.startsWith(b.url));
    const fromA = await a.fetch(path(ca.image_url));
    const fromB = await b.fetch(path(ca.image_url));
    assert.equal(fromB.status, 200);
    assert.equal(fromB.headers.get('content-type'), 'image/png');
    assert.ok(
      Buffer.from(await fromB.arrayBuffer()).equals(Buffer.from(await fromA.arrayBuffer())),
    );
  });

  it('deletes a screenshot on B and it is gone on A', async () => {
    const u = await nodeAccount(a, { plan: 'pro', cluster, key: true });
    const opts = { url: `${site.origin}/a`, width: 333, height: 111 };
    const made = (await (await capture(a, u.key, opts)).json()) as Capture;
    const del = await b.fetch(`/v1/screenshots/${made.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': u.key },
    });
    assert.equal(del.status, 200);
    assert.equal((await a.fetch(path(made.image_url))).status, 404);
    const list = (await (
      await a.fetch('/v1/screenshots', { headers: { 'x-api-key': u.key } })
    ).json()) as { data: unknown[] };
    assert.deepEqual(list.data, []);
    const again = (await (await capture(a, u.key, opts)).json()) as Capture;
    assert.equal(again.cached, false);
    assert.notEqual(path(again.image_url), path(made.image_url));
  });

  it('sweeps each expired image once, whichever node runs the sweeper', async () => {
    const u = await nodeAccount(a, { key: true });
    const made: Capture[] = [];
    for (const [node, width] of [
      [a, 201],
      [b, 202],
      [a, 203],
    ] as const) {
      made.push(
        (await (await capture(node, u.key, { url: `${site.origin}/`, width })).json()) as Capture,
      );
    }
    const tokens = made.map((m) => path(m.image_url).slice('/images/'.length).split('.')[0]);
    const objectUrl = (m: Capture) =>
      `${cluster.s3.endpoint}/${cluster.s3.bucket}/${path(m.image_url).slice('/images/'.length)}`;
    for (const m of made) assert.equal((await fetch(objectUrl(m))).status, 200, 'stored in S3');
    const swept = async () => (await scrape([a, b])).get('shotsmith_retention_swept_total') ?? 0;
    const before = await swept();
    await cluster.sql('UPDATE screenshots SET expires_at = $1 WHERE token = ANY($2)', [
      Date.now() - 1_000,
      tokens,
    ]);
    const deadline = Date.now() + 10_000;
    while (
      (await cluster.sql('SELECT 1 FROM screenshots WHERE token = ANY($1)', [tokens])).length
    ) {
      assert.ok(Date.now() < deadline, 'the sweeper did not run');
      await sleep(200);
    }
    await sleep(2_500); // two more sweep intervals on each node: nothing is swept twice
    assert.equal((await swept()) - before, 3);
    for (const m of made) {
      for (const node of [a, b]) assert.equal((await node.fetch(path(m.image_url))).status, 404);
      const object = await fetch(objectUrl(m));
      assert.equal(object.status, 404, 'the object is gone from the bucket');
    }
    const sweeps = await scrape([a, b]);
    assert.ok((sweeps.get('shotsmith_retention_sweeps_total{outcome="ran"}') ?? 0) > 0);
  });

  it('counts what happened in the metrics of the two nodes together', async () => {
    const metrics = await scrape([a, b]);
    const count = (status: number) => statuses.filter((s) => s === status).length;
    for (const status of [201, 400, 401, 402, 429]) {
      assert.equal(
        metrics.get(
          `shotsmith_http_requests_total{route="/v1/screenshots",method="POST",status="${status}"}`,
        ) ?? 0,
        count(status),
        `POST /v1/screenshots ${status}`,
      );
    }
    assert.equal(metrics.get('shotsmith_refusals_total{reason="rate"}'), count(429));
    assert.equal(metrics.get('shotsmith_refusals_total{reason="quota"}'), count(402));
    const hits = metrics.get('shotsmith_capture_duration_seconds_count{cache="hit"}') ?? 0;
    const misses = metrics.get('shotsmith_capture_duration_seconds_count{cache="miss"}') ?? 0;
    assert.equal(hits + misses, count(201));
    assert.ok(hits >= 8 && misses >= 5, `hits ${hits}, misses ${misses}`);
  });
});
