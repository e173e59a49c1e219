import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from './config.ts';

test('defaults need no configuration', () => {
  const c = loadConfig({});
  assert.equal(c.server.port, 8080);
  assert.equal(c.server.host, '0.0.0.0');
  assert.equal(c.server.publicUrl.origin, 'http://localhost:8080');
  assert.equal(c.data.databaseUrl, undefined);
  assert.equal(c.storage.kind, 'disk');
  assert.deepEqual(c.server.dashboardOrigins, ['http://localhost:8080']);
  assert.equal(c.server.trustProxy, false);
  assert.equal(c.render.timeoutMs, 30_000);
});

test('values are parsed and derived', () => {
  const c = loadConfig({
    PORT: '9000',
    HOST: '127.0.0.1',
    PUBLIC_URL: 'https://shots.example.com',
    DASHBOARD_ORIGINS: 'https://app.example.com, https://admin.example.com',
    TRUST_PROXY: '10.0.0.0/8,127.0.0.1',
    DATABASE_URL: 'postgres://u@db/x',
  });
  assert.equal(c.server.port, 9000);
  assert.equal(c.server.publicUrl.origin, 'https://shots.example.com');
  assert.deepEqual(c.server.dashboardOrigins, [
    'https://app.example.com',
    'https://admin.example.com',
  ]);
  assert.deepEqual(c.server.trustProxy, ['10.0.0.0/8', '127.0.0.1']);
  assert.equal(c.data.databaseUrl?.protocol, 'postgres:');
});

test('every problem is listed', () => {
  try {
    loadConfig({
      PORT: '99999',
      PUBLIC_URL: 'ftp://x',
      S3_ENDPOINT: 'http://s3',
      REDIS_URL: 'http://r',
    });
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.problems.length, 4, err.problems.join('\n'));
  }
});

test('scale-out settings: schema, Redis key prefix, sweep interval', () => {
  const c = loadConfig({
    DATABASE_URL: 'postgres://u@db/x',
    DATABASE_SCHEMA: 'shots_a',
    REDIS_URL: 'redis://r:6379',
    REDIS_PREFIX: 'prod-eu:',
    SWEEP_INTERVAL_MS: '5000',
  });
  assert.equal(c.data.databaseSchema, 'shots_a');
  assert.equal(c.redisUrl?.host, 'r:6379');
  assert.equal(c.redisPrefix, 'prod-eu:');
  assert.equal(c.data.sweepIntervalMs, 5000);
  const d = loadConfig({});
  assert.equal(d.redisPrefix, 'shotsmith:');
  assert.equal(d.data.sweepIntervalMs, 60_000);
  assert.equal(d.data.databaseSchema, undefined);
  try {
    loadConfig({
      DATABASE_SCHEMA: 'x; DROP TABLE users',
      REDIS_PREFIX: 'has space',
      SWEEP_INTERVAL_MS: '10',
    });
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    // A bad identifier, and a schema without DATABASE_URL, the prefix, the interval.
    assert.equal(err.problems.length, 4, err.problems.join('\n'));
  }
});
