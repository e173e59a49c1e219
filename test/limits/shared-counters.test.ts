import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { migrateToLatest } from '../../migrations/index.ts';
import { connectDatabase, type DatabaseHandle } from '../../src/adapters/db/connect.ts';
import { createMemoryCounters } from '../../src/adapters/limits/memory.ts';
import { createPostgresCounters } from '../../src/adapters/limits/postgres.ts';
import { createRedisCounters } from '../../src/adapters/limits/redis.ts';
import { connectRedis, type RedisClients } from '../../src/adapters/redis/connect.ts';
import { isAppError } from '../../src/domain/errors.ts';
import type { CounterFactory } from '../../src/domain/limits.ts';
import { freePort, withPg } from '../helpers/app.ts';
import { serviceSkip, TEST_DATABASE_URL, TEST_REDIS_URL } from '../helpers/services.ts';

/** The contract both shared counter stores keep: exact under concurrency, refunds, windows. */
function counterContract(make: () => CounterFactory) {
  it('grants exactly `limit` of many simultaneous takes', async () => {
    const counter = make().create({
      name: `c${randomBytes(3).toString('hex')}`,
      limit: 10,
      windowMs: 60_000,
    });
    const results = await Promise.all(Array.from({ length: 50 }, () => counter.take('k')));
    assert.equal(results.filter((r) => r.allowed).length, 10);
    for (const r of results.filter((x) => !x.allowed)) assert.equal(r.used, 10);
    assert.equal((await counter.peek('k')).used >= 10, true);
    assert.ok((await counter.peek('k')).resetAt > Date.now());
  });

  it('gives a refunded point back and resets', async () => {
    const counter = make().create({
      name: `r${randomBytes(3).toString('hex')}`,
      limit: 2,
      windowMs: 60_000,
    });
    assert.equal((await counter.take('k')).allowed, true);
    assert.equal((await counter.take('k')).allowed, true);
    await counter.refund('k');
    assert.equal((await counter.take('k')).allowed, true);
    await counter.reset('k');
    assert.equal((await counter.peek('k')).used, 0);
    assert.equal((await counter.take('k')).used, 1);
  });

  it('counts a refused take nowhere: after a refund exactly one more is granted', async () => {
    const counter = make().create({
      name: `f${randomBytes(3).toString('hex')}`,
      limit: 3,
      windowMs: 60_000,
    });
    for (let i = 0; i < 3; i++) assert.equal((await counter.take('k')).allowed, true);
    for (let i = 0; i < 4; i++) assert.equal((await counter.take('k')).allowed, false);
    await counter.refund('k');
    assert.equal((await counter.take('k')).allowed, true);
    assert.equal((await counter.take('k')).allowed, false);
    assert.equal((await counter.peek('k')).used, 3);
  });

  it('starts a new window when the old one ends', async () => {
    const counter = make().create({
      name: `w${randomBytes(3).toString('hex')}`,
      limit: 1,
      windowMs: 1_000,
    });
    assert.equal((await counter.take('k')).allowed, true);
    assert.equal((await counter.take('k')).allowed, false);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    assert.equal((await counter.take('k')).allowed, true);
  });
}

describe('memory counters (one node)', () => {
  counterContract(() => createMemoryCounters());
});

describe('PostgreSQL counters (several nodes, no Redis)', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  const schema = `l_${randomBytes(5).toString('hex')}`;
  let database: DatabaseHandle;
  before(async () => {
    await withPg((c) => c.query(`CREATE SCHEMA ${schema}`));
    database = connectDatabase({
      url: new URL(TEST_DATABASE_URL),
      dataDir: '/nonexistent',
      schema,
    });
    await migrateToLatest(database.db as never, 'postgres');
  });
  after(async () => {
    await database.close();
    await withPg((c) => c.query(`DROP SCHEMA ${schema} CASCADE`));
  });
  counterContract(() => createPostgresCounters(database.db));

  it('prunes ended windows', async () => {
    const counters = createPostgresCounters(database.db);
    await counters.create({ name: 'p', limit: 5, windowMs: 60_000 }).take('k');
    assert.equal(await counters.prune(Date.now()), 0);
    assert.ok((await counters.prune(Date.now() + 61_000)) >= 1);
  });
});

describe('Redis counters', async () => {
  const skip = await serviceSkip('redis');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  const prefix = `test-${randomBytes(4).toString('hex')}:`;
  let redis: RedisClients;
  before(async () => {
    redis = connectRedis(new URL(TEST_REDIS_URL));
    assert.ok(await redis.ready(5_000));
  });
  after(async () => {
    const keys = await redis.commands.keys(`${prefix}*`);
    if (keys.length > 0) await redis.commands.del(...keys);
    await redis.close();
  });
  counterContract(() => createRedisCounters(redis.commands, prefix));

  it('fails closed, at once, with 503 and Retry-After when Redis cannot answer', async () => {
    const dead = connectRedis(new URL(`redis://127.0.0.1:${await freePort()}`));
    try {
      const counter = createRedisCounters(dead.commands, prefix).create({
        name: 'x',
        limit: 5,
        windowMs: 60_000,
      });
      const started = Date.now();
      await assert.rejects(counter.take('k'), (err: unknown) => {
        assert.ok(isAppError(err));
        assert.equal(err.status, 503);
        assert.equal(err.code, 'overloaded');
        assert.ok(Number(err.headers?.['Retry-After']) >= 1);
        return true;
      });
      assert.ok(Date.now() - started < 2_000, 'no waiting on a dead Redis');
      await assert.rejects(dead.ping());
    } finally {
      await dead.close();
    }
  });
});
