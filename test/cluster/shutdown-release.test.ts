/**
 * A stopping node lets go at once of the work it would not finish (docs/deployment.md,
 * "Shutdown"): a webhook delivery it is sending when SIGTERM comes, and an async job its
 * renderer cuts off when the grace ends, are taken by another node within a poll or two,
 * not after their leases run out (30 s each by default). Two node processes on PostgreSQL,
 * without Redis (the database queue).
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import type { NodeProcess } from '../helpers/node-process.ts';
import { serviceSkip } from '../helpers/services.ts';

type Json = Record<string, unknown>;

/** Lease owners are `<host>:<pid>:<random>`: the node holding a row, by its pid. */
function holder(nodes: NodeProcess[], owner: string | null | undefined): NodeProcess {
  const pid = Number(owner?.split(':')[1]);
  const node = nodes.find((n) => n.pid === pid);
  if (!node) throw new Error(`no node holds ${owner}`);
  return node;
}

describe('a stopping node releases its claims at once', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  let cluster: Cluster;
  let site: FixtureSite;
  let receiver: Server;
  let receiverUrl = '';
  /** Webhook requests received: the first one is never answered. */
  const hooks: Array<{ id: string; at: number }> = [];
  const hung: ServerResponse[] = [];
  let stuckSeen = 0;

  before(async () => {
    receiver = createServer((req: IncomingMessage, res: ServerResponse) => {
      req.resume();
      req.on('end', () => {
        hooks.push({ id: String(req.headers['webhook-id']), at: Date.now() });
        if (hooks.length === 1) hung.push(res);
        else res.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.address() as AddressInfo;
    receiverUrl = `http://127.0.0.1:${port}/hooks`;
    site = await startSite({
      '/': page('<h1>fast</h1>'),
      // The first load never finishes (its node is stopped meanwhile); later ones do.
      '/stuck': (_req, res) => {
        stuckSeen++;
        if (stuckSeen === 1) {
          hung.push(res);
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>taken over</h1>'));
      },
    });
    cluster = await startCluster({
      nodes: 2,
      redisUrl: null,
      plans: { pro: { rate_per_minute: 1000 } },
      env: {
        EGRESS_ALLOWLIST: `${site.hostPort},127.0.0.1:${port}`,
        ASYNC_WORKERS: '1',
        RENDER_TIMEOUT_MS: '20000',
        SHUTDOWN_GRACE_SECONDS: '2',
      },
    });
  });
  after(async () => {
    for (const res of hung) res.destroy();
    await cluster?.close();
    await site?.close();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const live = () => cluster.nodes.filter((n) => !stopped.has(n));
  const stopped = new Set<NodeProcess>();
  const api = () => live()[0] as NodeProcess;

  const queue = async (key: string, body: Json) => {
    const res = await api().fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { width: 320, height: 200, async: true, ...body },
    });
    assert.equal(res.status, 202, await res.clone().text());
    return (await res.json()) as Json;
  };
  async function stop(node: NodeProcess): Promise<{ at: number; exited: Promise<number | null> }> {
    stopped.add(node);
    const at = Date.now();
    process.kill(node.pid, 'SIGTERM');
    return { at, exited: node.exited };
  }

  it('a webhook delivery being sent is taken by another node at once', async () => {
    const { key } = await nodeAccount(api(), { plan: 'pro', cluster, key: true });
    await queue(key, { url: `${site.origin}/`, webhook_url: receiverUrl });
    for (let i = 0; i < 600 && hooks.length === 0; i++) await sleep(50);
    assert.equal(hooks.length, 1, 'the delivery is being sent');
    const [row] = await cluster.sql<{ lease_owner: string | null }>(
      'SELECT lease_owner FROM webhook_deliveries',
    );
    const sender = holder(cluster.nodes, row?.lease_owner);
    const { at, exited } = await stop(sender);
    for (let i = 0; i < 600 && hooks.length < 2; i++) await sleep(50);
    const taken = (hooks[1]?.at ?? Number.POSITIVE_INFINITY) - at;
    console.log(`the delivery was sent again ${taken} ms after SIGTERM`);
    assert.equal(hooks.length, 2, 'sent again by the other node');
    assert.equal(hooks[1]?.id, hooks[0]?.id, 'the same webhook-id');
    // Its lease (30 s) did not have to run out.
    assert.ok(taken < 10_000, `${taken} ms`);
    assert.equal(await exited, 0);
    for (let i = 0; i < 100; i++) {
      const [d] = await cluster.sql<{ status: string }>('SELECT status FROM webhook_deliveries');
      if (d?.status === 'delivered') break;
      await sleep(100);
    }
    const [done] = await cluster.sql<{ status: string; attempts: number }>(
      'SELECT status, attempts FROM webhook_deliveries',
    );
    assert.deepEqual(done, { status: 'delivered', attempts: 1 });
  });

  it('an async job cut off by the grace is taken by another node at once', async () => {
    await cluster.addNode('C', {});
    const { key } = await nodeAccount(api(), { plan: 'pro', cluster, key: true });
    const job = await queue(key, { url: `${site.origin}/stuck` });
    for (let i = 0; i < 600 && stuckSeen === 0; i++) await sleep(50);
    assert.equal(stuckSeen, 1, 'a node renders it');
    const [row] = await cluster.sql<{ lease_owner: string | null }>(
      'SELECT lease_owner FROM capture_jobs WHERE id = $1',
      [job.id],
    );
    const worker = holder(cluster.nodes, row?.lease_owner);
    const { at, exited } = await stop(worker);
    let status: Json = {};
    for (let i = 0; i < 600; i++) {
      status = (await (
        await api().fetch(`/v1/screenshots/${String(job.id)}`, { headers: { 'x-api-key': key } })
      ).json()) as Json;
      if (status.status === 'succeeded' || status.status === 'failed') break;
      await sleep(100);
    }
    const took = Date.now() - at;
    console.log(`the job succeeded on another node ${took} ms after SIGTERM`);
    assert.equal(status.status, 'succeeded', JSON.stringify(status));
    // The grace (2 s) and a poll, not the job's lease (30 s) nor its render deadline (20 s).
    assert.ok(took < 15_000, `${took} ms`);
    assert.equal(await exited, 0);
    const [done] = await cluster.sql<{ attempts: number }>(
      'SELECT attempts FROM capture_jobs WHERE id = $1',
      [job.id],
    );
    assert.equal(done?.attempts, 2, 'the cut-off run counts as an attempt');
  });
});
