/**
 * A node killed mid-burst (`kill -9` of the process and its Chromium) holds quota units for
 * captures that never delivered. Restarted on the same data, within 2 minutes the account's
 * `used` is again the number of records (docs/plans-and-limits.md, "Plans"), on SQLite and on
 * PostgreSQL. The lease is shortened here (QUOTA_HOLD_LEASE_MS), as an operator may; the
 * default (60 s, swept every 15 s) is within the 2 minutes too.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { nodeAccount } from '../helpers/accounts.ts';
import { type DbKind, withPg } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../helpers/node-process.ts';
import { serviceSkip, TEST_DATABASE_URL } from '../helpers/services.ts';

/** A process and every process below it (its Chromium), killed at once: a node that dies. */
export function killTree(pid: number): void {
  const parentOf = (p: number): number => {
    try {
      return Number(readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
    } catch {
      return -1;
    }
  };
  const all = [pid];
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  for (let i = 0; i < all.length; i++) {
    for (const p of pids) if (parentOf(p) === all[i]) all.push(p);
  }
  for (const p of all) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {}
  }
}

/** Images under a disk storage directory (sharded, temp files excluded). */
async function imageFiles(dir: string): Promise<string[]> {
  const shards = await readdir(dir).catch(() => [] as string[]);
  const files: string[] = [];
  for (const shard of shards) {
    for (const f of await readdir(path.join(dir, shard)).catch(() => [] as string[])) {
      if (!f.startsWith('.')) files.push(f);
    }
  }
  return files;
}

/** Where the node keeps its data, and a way to count rows there while it is dead. */
interface Database {
  env: Record<string, string>;
  count(dataDir: string, sql: string): Promise<number>;
  rows<R>(dataDir: string, sql: string): Promise<R[]>;
  drop(): Promise<void>;
}

async function database(kind: DbKind): Promise<Database> {
  if (kind === 'sqlite') {
    const rows = async <R>(dataDir: string, sql: string): Promise<R[]> => {
      const db = new DatabaseSync(path.join(dataDir, 'shotsmith.sqlite'), { readOnly: true });
      try {
        return db.prepare(sql).all() as R[];
      } finally {
        db.close();
      }
    };
    return {
      env: {},
      rows,
      count: async (dataDir, sql) => Number((await rows<{ n: number }>(dataDir, sql))[0]?.n ?? 0),
      drop: async () => {},
    };
  }
  const schema = `crash_${randomBytes(5).toString('hex')}`;
  await withPg((client) => client.query(`CREATE SCHEMA ${schema}`));
  const rows = <R>(_dataDir: string, sql: string) =>
    withPg(async (client) => {
      await client.query(`SET search_path TO ${schema}`);
      return (await client.query(sql)).rows as R[];
    });
  return {
    env: { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema },
    rows,
    count: async (dataDir, sql) => Number((await rows<{ n: number }>(dataDir, sql))[0]?.n ?? 0),
    drop: async () => {
      await withPg((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    },
  };
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`a node killed mid-burst gives its held units back [${kind}]`, async () => {
    const skip = kind === 'postgres' ? await serviceSkip('postgres') : false;
    if (skip) {
      it('skipped', { skip }, () => {});
      return;
    }
    let site: FixtureSite;
    let plansDir: string;
    let db: Database;
    let first: NodeProcess;
    let second: NodeProcess | undefined;

    before(async () => {
      db = await database(kind);
      site = await startSite({
        '/slow': async (_req, res) => {
          await sleep(1_500);
          res.writeHead(200, { 'content-type': 'text/html' }).end(page('<h1>slow</h1>'));
        },
      });
      plansDir = await mkdtemp(path.join(tmpdir(), 'shotsmith-crash-plans-'));
      await writeFile(
        path.join(plansDir, 'plans.json'),
        JSON.stringify({ free: { rate_per_minute: 1000 } }),
      );
    });
    after(async () => {
      await second?.stop();
      await first?.stop();
      await site?.close();
      await rm(plansDir, { recursive: true, force: true });
      await db?.drop();
    });

    it('kill -9 with 10 captures in flight: after a restart `used` equals the records', async () => {
      const env = {
        ...db.env,
        EGRESS_ALLOWLIST: site.hostPort,
        PLANS_FILE: path.join(plansDir, 'plans.json'),
        QUOTA_HOLD_LEASE_MS: '4000',
      };
      first = await startNode('crash-a', env);
      const { key } = await nodeAccount(first, { key: true });

      // Ten different pages (no cache hit, no shared render), one render slot: they queue.
      let delivered = 0;
      const burst = Array.from({ length: 10 }, (_, i) =>
        first
          .fetch('/v1/screenshots', {
            method: 'POST',
            headers: { 'x-api-key': key },
            json: { url: `${site.origin}/slow?n=${i}`, width: 320, height: 200 },
          })
          .then(async (res) => {
            if (res.status === 201) delivered++;
            await res.body?.cancel();
          })
          .catch(() => {}),
      );
      const deadline = Date.now() + 60_000;
      while (delivered < 2 && Date.now() < deadline) await sleep(50);
      assert.ok(delivered >= 2, 'two captures delivered before the kill');
      killTree(first.pid);
      await Promise.all(burst);
      assert.ok(delivered < 10, 'the kill landed mid-burst');

      const dir = first.dataDir;
      const records = () => db.count(dir, 'SELECT COUNT(*) AS n FROM screenshots');
      // Every capture of the burst reserved its unit before the kill.
      assert.equal(await db.count(dir, 'SELECT SUM(used) AS n FROM usage_months'), 10);
      assert.ok((await records()) >= delivered);

      second = await startNode('crash-b', { ...env, DATA_DIR: dir });
      const started = Date.now();
      let used = -1;
      while (Date.now() - started < 120_000) {
        const res = await second.fetch('/v1/usage', { headers: { 'x-api-key': key } });
        used = ((await res.json()) as { used: number }).used;
        if (used === (await records())) break;
        await sleep(250);
      }
      assert.equal(used, await records(), 'used equals the records within 2 minutes');
      assert.equal(await db.count(dir, 'SELECT COUNT(*) AS n FROM quota_holds'), 0, 'no hold');
      // The usage chart's days still add up to the month.
      assert.equal(await db.count(dir, 'SELECT SUM(count) AS n FROM usage_days'), used);
      // Every record has its image.
      const images = new Set(await imageFiles(path.join(dir, 'images')));
      const rows = await db.rows<{ token: string; ext: string }>(
        dir,
        'SELECT token, ext FROM screenshots',
      );
      for (const r of rows) assert.ok(images.has(`${r.token}.${r.ext}`), 'image of a record');

      // And the restarted node takes captures as before.
      const res = await second.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { url: `${site.origin}/slow?n=after`, width: 320, height: 200 },
      });
      assert.equal(res.status, 201, await res.clone().text());
      const after = (await (
        await second.fetch('/v1/usage', { headers: { 'x-api-key': key } })
      ).json()) as { used: number };
      assert.equal(after.used, await records());
    });
  });
}
