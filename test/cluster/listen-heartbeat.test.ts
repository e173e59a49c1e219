import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import {
  createPostgresRevocations,
  listenConnectionName,
  revokedKeyId,
} from '../../src/adapters/events/postgres-revocations.ts';
import { silentLogger } from '../../src/lib/logger.ts';
import { withPg } from '../helpers/app.ts';
import { sleep } from '../helpers/fixtures.ts';
import { serviceSkip, TEST_DATABASE_URL } from '../helpers/services.ts';

it('reads a notification payload only for its own schema', () => {
  assert.equal(revokedKeyId('tenant_a|42', 'tenant_a'), 42);
  assert.equal(revokedKeyId('tenant_b|42', 'tenant_a'), null);
  assert.equal(revokedKeyId('tenant_a|4.5', 'tenant_a'), null);
  assert.equal(revokedKeyId('42', 'tenant_a'), null);
  // A schema name holding the separator still parses from the last one.
  assert.equal(revokedKeyId('a|b|7', 'a|b'), 7);
});

/**
 * A LISTEN connection whose server side stops answering (a half-open TCP connection after a
 * NAT or failover dropped it looks the same from here) is found by the heartbeat and replaced.
 * The backend process is frozen with SIGSTOP, which needs the right to signal it (root here).
 */
describe('the LISTEN connection heartbeat', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  const schema = `hb_${randomBytes(4).toString('hex')}`;
  const name = listenConnectionName(schema);
  const bus = createPostgresRevocations({
    url: new URL(TEST_DATABASE_URL),
    schema,
    notify: async (channel, payload) => {
      await withPg((c) => c.query('SELECT pg_notify($1, $2)', [channel, payload]));
    },
    heartbeatMs: 200,
    heartbeatTimeoutMs: 500,
    logger: silentLogger,
  });
  after(() => bus.close());

  const listeners = () =>
    withPg(async (c) => {
      const { rows } = await c.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'LISTEN%'`,
        [name],
      );
      return rows.map((r) => r.pid);
    });

  it('replaces a connection that stops answering and hears revocations again', async (t) => {
    assert.equal(await bus.ready(10_000), true);
    const [frozen] = await listeners();
    assert.ok(frozen, 'a LISTEN connection is open');
    try {
      process.kill(frozen, 'SIGSTOP');
    } catch (err) {
      t.skip(`cannot signal the PostgreSQL backend: ${(err as Error).message}`);
      return;
    }
    try {
      const deadline = Date.now() + 20_000;
      let replacement: number | undefined;
      while (replacement === undefined) {
        replacement = (await listeners()).find((pid) => pid !== frozen);
        if (replacement === undefined) {
          assert.ok(Date.now() < deadline, 'no new LISTEN connection after the heartbeat failed');
          await sleep(100);
        }
      }
      const heard: number[] = [];
      bus.subscribe((keyId) => heard.push(keyId));
      await withPg((c) =>
        c.query('SELECT pg_notify($1, $2)', ['shotsmith_key_revoked', `${schema}|42`]),
      );
      const until = Date.now() + 10_000;
      while (!heard.includes(42)) {
        assert.ok(Date.now() < until, 'the revocation was not heard on the new connection');
        await sleep(50);
      }
    } finally {
      process.kill(frozen, 'SIGCONT');
      await withPg((c) => c.query('SELECT pg_terminate_backend($1)', [frozen]));
    }
  });
});
