/**
 * Monitors across nodes as real processes (docs/api.md, "Monitors"): two nodes tick on the
 * same PostgreSQL, without Redis (the database queue) and with it (BullMQ), and every due
 * monitor runs exactly once per slot: one run, one job, one unit. Then a node is killed
 * between due times and the next slot still runs once per monitor, on the node left. The
 * test moves the due times back one interval in the database instead of waiting for them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { killTree, type NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';

/** Monitors due together: more than one node's ticks and workers take at once. */
const MONITORS = 6;

interface RunRow {
  monitor_id: string;
  id: string;
  status: string;
  jobs: string;
  [column: string]: unknown;
}

for (const mode of ['postgres queue', 'bullmq'] as const) {
  describe(`monitors across nodes (${mode})`, async () => {
    const skip =
      (await serviceSkip('postgres')) || (mode === 'bullmq' ? await serviceSkip('redis') : false);
    if (skip) {
      it('skipped', { skip }, () => {});
      return;
    }
    let cluster: Cluster;
    let site: FixtureSite;

    before(async () => {
      site = await startSite({
        // A little slow, so that runs overlap and both nodes' workers take some.
        '/': (_req, res) => {
          setTimeout(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>watched</h1>'));
          }, 200);
        },
      });
      cluster = await startCluster({
        nodes: 2,
        redisUrl: mode === 'bullmq' ? undefined : null,
        plans: { pro: { rate_per_minute: 1000, max_monitors: 20 } },
        env: { EGRESS_ALLOWLIST: site.hostPort, ASYNC_WORKERS: '1', JOB_LEASE_MS: '3000' },
      });
    });
    after(async () => {
      await cluster?.close();
      await site?.close();
    });

    /**
     * The account's monitors' next slot comes: each due time moved back one interval, to the
     * slot before it (already passed), as if a week had gone by. Weekly slots: the real next
     * one is never within the test's minute (a 15-minute one could be).
     */
    const makeDue = (userId: number) =>
      cluster.sql('UPDATE monitors SET next_run_at = next_run_at - $1 WHERE user_id = $2', [
        7 * 24 * 60 * 60_000,
        userId,
      ]);
    /** Each run of the account's monitors, with how many jobs carried it. */
    const runRows = (userId: number) =>
      cluster.sql<RunRow>(
        `SELECT r.monitor_id, r.id, r.status,
                (SELECT count(*) FROM capture_jobs j WHERE j.monitor_run_id = r.id) AS jobs
           FROM monitor_runs r JOIN monitors m ON m.id = r.monitor_id
          WHERE m.user_id = $1`,
        [userId],
      );
    /** Waits until each monitor has `n` runs, none running, and a tick more passed. */
    const settle = async (userId: number, n: number): Promise<RunRow[]> => {
      const end = Date.now() + 120_000;
      for (;;) {
        const rows = await runRows(userId);
        if (rows.length >= n * MONITORS && rows.every((r) => r.status !== 'running')) break;
        assert.ok(Date.now() < end, `runs: ${JSON.stringify(rows)}`);
        await sleep(250);
      }
      // A few more ticks of every node (BOUNDS.monitors.tickMs): nothing runs twice.
      await sleep(4 * BOUNDS.monitors.tickMs + 1_000);
      return runRows(userId);
    };
    const perMonitor = (rows: RunRow[]) => {
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(r.monitor_id, (counts.get(r.monitor_id) ?? 0) + 1);
      return [...counts.values()];
    };

    it('runs every due monitor once per slot, also after a node is killed', async () => {
      const api = cluster.nodes[0] as NodeProcess;
      const account = await nodeAccount(api, { plan: 'pro', cluster, key: true });
      for (let i = 0; i < MONITORS; i++) {
        const res = await api.fetch('/v1/monitors', {
          method: 'POST',
          headers: { 'x-api-key': account.key },
          json: {
            url: `${site.origin}/?m=${i}`,
            every: '7d',
            options: { width: 320, height: 200 },
          },
        });
        assert.equal(res.status, 201, await res.clone().text());
      }

      await makeDue(account.id);
      const first = await settle(account.id, 1);
      assert.deepEqual(perMonitor(first), Array(MONITORS).fill(1), 'one run per monitor');
      assert.ok(
        first.every((r) => r.status === 'succeeded' && Number(r.jobs) === 1),
        JSON.stringify(first),
      );
      const moved = await cluster.sql<{ next_run_at: string }>(
        'SELECT next_run_at FROM monitors WHERE user_id = $1',
        [account.id],
      );
      assert.ok(
        moved.every((m) => Number(m.next_run_at) > Date.now()),
        'each due time moved to its next slot',
      );

      // Node B dies (with its browser) between two due times; A alone runs the next slot.
      const b = cluster.nodes[1] as NodeProcess;
      killTree(b.pid);
      await b.exited;
      await makeDue(account.id);
      const second = await settle(account.id, 2);
      assert.deepEqual(perMonitor(second), Array(MONITORS).fill(2), 'one more run per monitor');
      assert.ok(
        second.every((r) => r.status === 'succeeded' && Number(r.jobs) === 1),
        JSON.stringify(second),
      );

      const usage = (await (
        await api.fetch('/v1/usage', { headers: { 'x-api-key': account.key } })
      ).json()) as { used: number };
      assert.equal(usage.used, 2 * MONITORS, 'one unit per run');
    });
  });
}
