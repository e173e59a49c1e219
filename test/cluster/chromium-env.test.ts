/**
 * Chromium gets only what it needs (docs/security.md, "Chromium's environment"): a scale-out
 * node started with its database, Redis, S3 and payment credentials, its server secret and an
 * unrelated variable of the operator's, renders a page; no process of its browser (the
 * browser, its zygotes, renderers and utilities, and the crashpad handlers that leave its
 * process tree) holds any of them in its environment, by name or by value.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import {
  listProcesses,
  processesMentioning,
  processKind,
  processTree,
} from '../../src/adapters/browser/process/proc.ts';
import { nodeAccount } from '../helpers/accounts.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { serviceSkip } from '../helpers/services.ts';

const SECRETS: Record<string, string> = {
  SERVER_SECRET: 'canary-server-secret-3f9a1c7e5b2d4a6f8e0c',
  STRIPE_SECRET_KEY: 'sk_test_canaryStripeKey1234567890',
  STRIPE_WEBHOOK_SECRET: 'whsec_canaryWebhookSecret1234567890',
  STRIPE_PRICE_ID: 'price_canary123',
  // Never contacted: the test makes no payment.
  STRIPE_API_BASE: 'http://127.0.0.1:9',
  AWS_SECRET_ACCESS_KEY: 'canary-aws-secret-9d8c7b6a',
  AWS_ACCESS_KEY_ID: 'AKIACANARY1234567890',
  OPERATOR_OWN_TOKEN: 'canary-operator-token-5e4d3c2b',
};

/** Names no browser process may carry (every one the service or its libraries read). */
const FORBIDDEN = /^(SERVER_SECRET|DATABASE_|REDIS_|S3_|AWS_|STRIPE_|OPERATOR_OWN_TOKEN$)/;

function environ(pid: number): Map<string, string> | null {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return null; // gone meanwhile
  }
  const out = new Map<string, string>();
  for (const entry of raw.split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out.set(entry.slice(0, eq), entry.slice(eq + 1));
  }
  return out;
}

describe("Chromium's environment", async () => {
  const skip = (await serviceSkip('postgres')) || (await serviceSkip('redis'));
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }

  let cluster: Cluster;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/page': page('<h1>env</h1>') });
    cluster = await startCluster({
      nodes: 1,
      env: { ...SECRETS, EGRESS_ALLOWLIST: site.hostPort },
    });
  });
  after(async () => {
    await cluster?.close();
    await site?.close();
  });

  it('holds none of the service’s secrets in any browser process', async () => {
    const node = cluster.nodes[0];
    assert.ok(node);
    // The node itself has them: the check below can see what it looks for.
    const own = environ(node.pid);
    assert.equal(own?.get('SERVER_SECRET'), SECRETS.SERVER_SECRET);
    assert.ok(own?.get('DATABASE_URL') && own.get('REDIS_URL') && own.get('S3_SECRET_ACCESS_KEY'));

    const { key } = await nodeAccount(node, { key: true });
    const res = await node.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${site.origin}/page`, width: 400, height: 300 },
    });
    assert.equal(res.status, 201, await res.text());

    const tree = processTree(node.pid, listProcesses()).filter((p) => p.pid !== node.pid);
    // Crashpad handlers leave the tree; they run on the browser's temp directory (its HOME).
    const homes = new Set<string>();
    for (const p of tree) {
      const home = environ(p.pid)?.get('HOME');
      if (home?.includes('shotsmith-chromium-')) homes.add(home);
    }
    assert.ok(homes.size > 0, 'the browser runs on a temp directory of its own');
    const pids = new Set([...tree.map((p) => p.pid), ...[...homes].flatMap(processesMentioning)]);
    const kinds = new Map<number, string>();
    let checked = 0;
    for (const pid of pids) {
      const env = environ(pid);
      if (env === null) continue;
      const kind = processKind(pid) ?? '?';
      kinds.set(pid, kind);
      checked++;
      const leaked = [...env.keys()].filter((name) => FORBIDDEN.test(name));
      assert.deepEqual(leaked, [], `${kind} (${pid}) has ${leaked.join(', ')}`);
      const values = [...env.values()];
      for (const [name, secret] of Object.entries(SECRETS)) {
        assert.ok(!values.some((v) => v.includes(secret)), `${kind} (${pid}) holds ${name}`);
      }
    }
    const seen = [...kinds.values()];
    console.log(`  checked ${checked} processes: ${seen.join(', ')}`);
    assert.ok(seen.includes('renderer'), `a renderer among ${seen.join(', ')}`);
    assert.ok(checked >= 4, `only ${checked} processes found`);
  });
});
