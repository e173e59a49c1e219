/**
 * Async captures across nodes as real processes (docs/deployment.md, "Async captures"): a job
 * queued on one node runs on another; a job whose node is killed while it renders is taken
 * over by another node and finishes once (one result, one webhook). Run without Redis (the
 * PostgreSQL queue, SKIP LOCKED) and with it (BullMQ).
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { killTree, type NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';

type Json = Record<string, unknown>;

for (const mode of ['postgres queue', 'bullmq'] as const) {
  describe(`async jobs across nodes (${mode})`, async () => {
    const skip =
      (await serviceSkip('postgres')) || (mode === 'bullmq' ? await serviceSkip('redis') : false);
    if (skip) {
      it('skipped', { skip }, () => {});
      return;
    }
    let cluster: Cluster;
    let api: NodeProcess;
    let site: FixtureSite;
    let hooks: WebhookReceiver;
    /** The first request for /stuck hangs (its node is killed meanwhile); later ones answer. */
    let stuckSeen = 0;
    const stuck: ServerResponse[] = [];

    before(async () => {
      hooks = await startWebhookReceiver();
      site = await startSite({
        '/': page('<h1>elsewhere</h1>'),
        '/stuck': (_req, res) => {
          stuckSeen++;
          if (stuckSeen === 1) {
            stuck.push(res);
            return;
          }
          res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>taken over</h1>'));
        },
      });
      cluster = await startCluster({
        nodes: 2,
        redisUrl: mode === 'bullmq' ? undefined : null,
        plans: { pro: { rate_per_minute: 1000 } },
        env: {
          EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
          JOB_LEASE_MS: '3000',
          // With Redis the killed node's render lock on the page holds until its deadline
          // passes: a short deadline keeps the take-over quick.
          RENDER_TIMEOUT_MS: '8000',
        },
        // A takes API requests only; B is the only worker, until it is killed.
        perNode: [{ ASYNC_WORKERS: '0' }, { ASYNC_WORKERS: '1' }],
      });
      api = cluster.nodes[0] as NodeProcess;
    });
    after(async () => {
      for (const res of stuck) res.destroy();
      await cluster?.close();
      await site?.close();
      await hooks?.close();
    });

    const queue = async (key: string, body: Json) => {
      const res = await api.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { width: 320, height: 200, async: true, webhook_url: hooks.url, ...body },
      });
      assert.equal(res.status, 202, await res.clone().text());
      return (await res.json()) as Json;
    };
    const status = async (key: string, id: unknown, timeoutMs = 90_000) => {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const body = (await (
          await api.fetch(`/v1/screenshots/${String(id)}`, { headers: { 'x-api-key': key } })
        ).json()) as Json;
        if (body.status === 'succeeded' || body.status === 'failed') return body;
        if (Date.now() > end) throw new Error(`still ${String(body.status)}`);
        await sleep(100);
      }
    };

    it('runs a job queued on one node on another', async () => {
      const { key } = await nodeAccount(api, { plan: 'pro', cluster, key: true });
      const before = hooks.received.length;
      const job = await queue(key, { url: `${site.origin}/` });
      const done = await status(key, job.id);
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      // The image is served by the node that took the request too (shared store).
      assert.equal((await fetch(String(done.image_url))).status, 200);
      const [row] = await cluster.sql<{ lease_owner: string | null; attempts: number }>(
        'SELECT lease_owner, attempts FROM capture_jobs WHERE id = $1',
        [job.id],
      );
      assert.deepEqual(row, { lease_owner: null, attempts: 1 });
      await hooks.waitFor(before + 1);
    });

    it('takes over a job whose node was killed mid-render, and finishes it once', async () => {
      const { key } = await nodeAccount(api, { plan: 'pro', cluster, key: true });
      const before = hooks.received.length;
      const job = await queue(key, { url: `${site.origin}/stuck` });
      // B is rendering it (the page hangs): kill B and its browser.
      for (let i = 0; i < 200 && stuckSeen === 0; i++) await sleep(50);
      assert.equal(stuckSeen, 1, 'the worker node loads the page');
      const worker = cluster.nodes[1] as NodeProcess;
      killTree(worker.pid);
      const [held] = await cluster.sql<{ status: string }>(
        'SELECT status FROM capture_jobs WHERE id = $1',
        [job.id],
      );
      assert.equal(held?.status, 'rendering');
      // A new worker node: it takes the job once B's lease (3 s) has run out (with Redis,
      // and renders it once B's render lock has run out too).
      await cluster.addNode('C', { ASYNC_WORKERS: '1' });
      const done = await status(key, job.id);
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      const [row] = await cluster.sql<{ attempts: number }>(
        'SELECT attempts FROM capture_jobs WHERE id = $1',
        [job.id],
      );
      // Taken over once; with Redis C may first outwait B's render lock (a retryable
      // failure) and try once more.
      assert.ok(row && row.attempts >= 2 && row.attempts <= 3, `attempts ${row?.attempts}`);
      await hooks.waitFor(before + 1);
      await sleep(1_500);
      const mine = hooks.received
        .slice(before)
        .map((h) => JSON.parse(h.body) as { type: string; data: Json })
        .filter((h) => h.data.id === job.id);
      assert.deepEqual(
        mine.map((h) => h.type),
        ['screenshot.succeeded'],
        'one result, one event',
      );
      const usage = (await (
        await api.fetch('/v1/usage', { headers: { 'x-api-key': key } })
      ).json()) as Json;
      assert.equal(usage.used, 1, 'one unit for the one job');
    });
  });
}
