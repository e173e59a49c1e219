import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PASSWORD, uniqueEmail } from '../helpers/app.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
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
    const res = await a.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email: uniqueEmail('noredis'), password: PASSWORD },
    });
    const cookie = (res.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
    const { key } = (await (
      await a.fetch('/v1/keys', { method: 'POST', cookie, json: {} })
    ).json()) as { key: string };
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
