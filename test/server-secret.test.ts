/**
 * The server secret signing secrets derive from (docs/security.md, "Signing secrets"): made
 * once and shared by every node and restart when SERVER_SECRET is unset, taken from the
 * environment when set, refused when short; required in production (test/config.test.ts
 * starts the real process without it: exit 78).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { loadConfig } from '../src/config/config.ts';
import { type AppDeps, buildDeps } from '../src/deps.ts';
import { silentLogger } from '../src/lib/logger.ts';
import { describeEachDatabase, withPg } from './helpers/app.ts';
import { longDataDir, removeDataDir } from './helpers/data-dir.ts';
import { TEST_DATABASE_URL } from './helpers/services.ts';

describeEachDatabase('server secret', (db) => {
  const cleanups: Array<() => Promise<void>> = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** A place for several nodes (or restarts) to share: a data dir, and a schema on PostgreSQL. */
  async function sharedStore(): Promise<Record<string, string>> {
    const dir = await longDataDir('secret');
    cleanups.push(() => removeDataDir(dir));
    if (db === 'sqlite') return { DATA_DIR: dir };
    const schema = `t_${randomBytes(6).toString('hex')}`;
    await withPg((c) => c.query(`CREATE SCHEMA ${schema}`));
    cleanups.push(() => withPg((c) => c.query(`DROP SCHEMA ${schema} CASCADE`)).then(() => {}));
    return { DATA_DIR: dir, DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema };
  }

  async function node(env: Record<string, string>, warnings: string[] = []): Promise<AppDeps> {
    const deps = await buildDeps(loadConfig({ LOG_LEVEL: 'silent', ...env }), {
      logger: { ...silentLogger, warn: (_o, msg) => warnings.push(msg) },
    });
    cleanups.push(() => deps.close());
    return deps;
  }

  const derived = (deps: AppDeps) => deps.ctx.secrets.derive('test', 1, 'n').toString('hex');

  it('unset: one secret, made once, shared by nodes and kept over restarts', async () => {
    const store = await sharedStore();
    // PostgreSQL: two nodes starting at once; SQLite is one node by construction, so one
    // after the other.
    const [first, second] =
      db === 'postgres'
        ? await Promise.all([node(store), node(store)])
        : [await node(store), await node(store)];
    assert.ok(first && second);
    assert.equal(derived(first), derived(second), 'two nodes agree');
    await first.close();
    const restarted = await node(store);
    assert.equal(derived(restarted), derived(second), 'a restart keeps it');
    const elsewhere = await node(await sharedStore());
    assert.notEqual(derived(elsewhere), derived(second), 'another deployment has its own');
  });

  it('SERVER_SECRET set: it is the root, on any database; production needs it', async () => {
    const secret = 'a'.repeat(16) + randomBytes(16).toString('hex');
    const one = await node({ ...(await sharedStore()), SERVER_SECRET: secret });
    const two = await node({ ...(await sharedStore()), SERVER_SECRET: secret });
    assert.equal(derived(one), derived(two), 'the same secret, the same derived keys');
    await assert.rejects(
      node({ ...(await sharedStore()), NODE_ENV: 'production', LOCAL_BILLING_IN_PRODUCTION: '1' }),
      /SERVER_SECRET is required with NODE_ENV=production/,
    );
    const quiet: string[] = [];
    await node(
      {
        ...(await sharedStore()),
        NODE_ENV: 'production',
        LOCAL_BILLING_IN_PRODUCTION: '1',
        SERVER_SECRET: secret,
      },
      quiet,
    );
    assert.ok(!quiet.some((w) => w.startsWith('SERVER_SECRET')), quiet.join('\n'));
  });
});

describe('server secret: configuration', () => {
  it('refuses a SERVER_SECRET shorter than 32 characters', () => {
    assert.throws(
      () => loadConfig({ SERVER_SECRET: 'short' }),
      /SERVER_SECRET must be at least 32 characters/,
    );
  });
});
