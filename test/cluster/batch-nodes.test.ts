/**
 * A batch across nodes as real processes (docs/api.md, "Batches"): two worker nodes take the
 * batch's jobs at once, and the batch still completes once: one `batch.completed` with the
 * counts, one event per job. Run without Redis (the PostgreSQL queue, SKIP LOCKED) and with
 * it (BullMQ).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import type { NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhooks.ts';

type Json = Record<string, unknown>;

/** Requests in the batch: more than one node's workers take at once. */
const SIZE = 8;

for (const mode of ['postgres queue', 'bullmq'] as const) {
  describe(`a batch across nodes (${mode})`, async () => {
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

    before(async () => {
      hooks = await startWebhookReceiver();
      site = await startSite({
        // A little slow, so that jobs overlap and both nodes take some.
        '/': (_req, res) => {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>node</h1>'));
          }, 300);
        },
        // Fails with fail_on_http_error.
        '/gone': (_req, res) => {
          res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>gone</h1>');
        },
      });
      cluster = await startCluster({
        nodes: 2,
        redisUrl: mode === 'bullmq' ? undefined : null,
        plans: { pro: { rate_per_minute: 1000 } },
        env: {
          EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
          ASYNC_WORKERS: '2',
        },
      });
      api = cluster.nodes[0] as NodeProcess;
    });
    after(async () => {
      await cluster?.close();
      await site?.close();
      await hooks?.close();
    });

    it('completes once while two nodes finish its jobs', async () => {
      const { key } = await nodeAccount(api, { plan: 'pro', cluster, key: true });
      const requests = Array.from({ length: SIZE }, (_, i) => ({
        url: i === SIZE - 1 ? `${site.origin}/gone` : `${site.origin}/?n=${i}`,
        width: 320,
        height: 200,
        ...(i === SIZE - 1 ? { fail_on_http_error: true } : {}),
      }));
      const res = await api.fetch('/v1/screenshots/batch', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { requests, webhook_url: hooks.url },
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { batch_id, jobs } = (await res.json()) as { batch_id: string; jobs: Json[] };
      const ids = new Set(jobs.map((j) => String(j.id)));
      const ours = () =>
        hooks.received
          .map((h) => JSON.parse(h.body) as { type: string; data: Json })
          .filter((e) => e.data.batch_id === batch_id);
      const owners = new Set<string>();
      const end = Date.now() + 120_000;
      while (!ours().some((e) => e.type === 'batch.completed')) {
        if (Date.now() > end) throw new Error(`no batch.completed: ${JSON.stringify(ours())}`);
        const held = await cluster.sql<{ lease_owner: string }>(
          "SELECT lease_owner FROM capture_jobs WHERE batch_id = $1 AND status = 'rendering'",
          [batch_id],
        );
        // host:pid:suffix, one per node
        for (const r of held) owners.add(r.lease_owner.split(':').slice(0, 2).join(':'));
        await sleep(50);
      }
      await sleep(1_500); // a second batch.completed would have come by now
      const events = ours();
      const completed = events.filter((e) => e.type === 'batch.completed');
      assert.deepEqual(
        completed.map((e) => e.data),
        [{ batch_id, succeeded: SIZE - 1, failed: 1 }],
      );
      const perJob = events.filter((e) => e.type !== 'batch.completed');
      assert.equal(perJob.length, SIZE, 'one event per job');
      assert.deepEqual(new Set(perJob.map((e) => String(e.data.id))), ids);
      const [row] = await cluster.sql<{ succeeded: number; failed: number; total: number }>(
        'SELECT succeeded, failed, total FROM capture_batches WHERE id = $1',
        [batch_id],
      );
      assert.deepEqual(row, { succeeded: SIZE - 1, failed: 1, total: SIZE });
      // Both nodes held some of them (a lease's owner names its node).
      assert.equal(owners.size, 2, `leases seen: ${[...owners].join(', ')}`);
    });
  });
}
