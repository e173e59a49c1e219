import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
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
  // Two render slots per core (a capture waits about as much as it works), 64 at most.
  assert.equal(c.render.concurrency, Math.min(64, 2 * availableParallelism()));
  // Queued work leaves one render slot to synchronous captures.
  assert.equal(c.jobs.workers, Math.max(1, c.render.concurrency - 1));
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

test('the CDP message bound: its default, and room for the largest image', () => {
  const c = loadConfig({});
  assert.equal(c.render.maxMessageBytes, 384 * 2 ** 20);
  assert.equal(loadConfig({ CDP_MAX_MESSAGE_MB: '480' }).render.maxMessageBytes, 480 * 2 ** 20);
  assert.throws(() => loadConfig({ CDP_MAX_MESSAGE_MB: '481' }), ConfigError);
  // A 90-megapixel image needs more than the default bound; a bound too small for the
  // image bound is refused at boot, naming what it needs.
  assert.throws(
    () => loadConfig({ MAX_IMAGE_PIXELS: '90000000' }),
    /CDP_MAX_MESSAGE_MB must be at least 461/,
  );
  assert.equal(
    loadConfig({ MAX_IMAGE_PIXELS: '90000000', CDP_MAX_MESSAGE_MB: '461' }).render.maxImagePixels,
    90_000_000,
  );
  assert.throws(() => loadConfig({ CDP_MAX_MESSAGE_MB: '16' }), /MAX_IMAGE_PIXELS=64000000/);
  assert.doesNotThrow(() => loadConfig({ CDP_MAX_MESSAGE_MB: '16', MAX_IMAGE_PIXELS: '2000000' }));
});

test('the shutdown grace: the render deadline plus 10 s by default; the old name refused', () => {
  assert.equal(loadConfig({}).server.shutdownGraceMs, 40_000);
  assert.equal(loadConfig({ RENDER_TIMEOUT_MS: '15500' }).server.shutdownGraceMs, 26_000);
  assert.equal(loadConfig({ SHUTDOWN_GRACE_SECONDS: '5' }).server.shutdownGraceMs, 5_000);
  assert.throws(() => loadConfig({ SHUTDOWN_GRACE_SECONDS: '0' }), ConfigError);
  assert.throws(
    () => loadConfig({ SHUTDOWN_TIMEOUT_MS: '30000' }),
    /SHUTDOWN_TIMEOUT_MS was replaced by SHUTDOWN_GRACE_SECONDS/,
  );
});
