/**
 * What nodes share (ARCHITECTURE.md, scale-out): with Redis, limits, revocations and render
 * locks go through it; on PostgreSQL without Redis the counters live in the database, so
 * limits stay exact on any number of nodes, and revocations travel over LISTEN/NOTIFY; the
 * embedded mode (SQLite, one node by construction) keeps all three in process.
 */
import { sql } from 'kysely';
import type { DatabaseHandle } from '../adapters/db/connect.ts';
import { createMemoryRevocations } from '../adapters/events/memory-revocations.ts';
import { createPostgresRevocations } from '../adapters/events/postgres-revocations.ts';
import { createRedisRevocations } from '../adapters/events/redis-revocations.ts';
import { createMemoryCounters } from '../adapters/limits/memory.ts';
import { createPostgresCounters, type PrunableCounters } from '../adapters/limits/postgres.ts';
import { createRedisCounters } from '../adapters/limits/redis.ts';
import { createMemoryRenderLocks } from '../adapters/locks/memory.ts';
import { createRedisRenderLocks } from '../adapters/locks/redis.ts';
import type { RedisClients } from '../adapters/redis/connect.ts';
import type { Config } from '../config/config.ts';
import type { RenderLocks } from '../domain/captures/ports.ts';
import type { CounterFactory } from '../domain/limits.ts';
import type { RevocationBus } from '../domain/revocations.ts';
import type { Logger } from '../lib/logger.ts';
import type { Part } from './part.ts';

export interface SharedState {
  counters: CounterFactory;
  /** The counters when they live in the database (the retention sweep prunes them). */
  dbCounters: PrunableCounters | null;
  revocations: RevocationBus;
  renderLocks: RenderLocks;
}

/** How long the boot waits for the LISTEN connection before it goes on (it keeps trying). */
const LISTEN_WAIT_MS = 5_000;

export async function sharedStatePart(options: {
  config: Pick<Config, 'redisPrefix' | 'data'>;
  redis: RedisClients | null;
  database: DatabaseHandle;
  schema: string | undefined;
  logger: Logger;
}): Promise<Part<SharedState>> {
  const { redis, database } = options;
  const prefix = options.config.redisPrefix;
  const dbCounters =
    !redis && database.dialect === 'postgres' ? createPostgresCounters(database.db) : null;
  const revocations: RevocationBus = redis
    ? createRedisRevocations(redis.commands, redis.subscriber, prefix)
    : ((await listenRevocations(options)) ?? createMemoryRevocations());
  return {
    gives: {
      counters: redis
        ? createRedisCounters(redis.commands, prefix)
        : (dbCounters ?? createMemoryCounters()),
      dbCounters,
      revocations,
      renderLocks: redis
        ? createRedisRenderLocks(redis.commands, prefix)
        : createMemoryRenderLocks(),
    },
    close: () => revocations.close(),
  };
}

/**
 * Revocations reach every node: over Redis, else PostgreSQL LISTEN/NOTIFY; the in-process
 * bus only serves SQLite, which is one node by construction. Null when this is not the
 * PostgreSQL-without-Redis case.
 */
async function listenRevocations(options: {
  config: Pick<Config, 'data'>;
  database: DatabaseHandle;
  schema: string | undefined;
  logger: Logger;
}): Promise<RevocationBus | null> {
  const { database, logger } = options;
  const url = options.config.data.databaseUrl;
  if (database.dialect !== 'postgres' || !url) return null;
  const bus = createPostgresRevocations({
    url,
    schema: options.schema,
    notify: async (channel, payload) => {
      await sql`select pg_notify(${channel}, ${payload})`.execute(database.db);
    },
    logger,
  });
  if (!(await bus.ready(LISTEN_WAIT_MS))) {
    logger.warn({}, 'revocation LISTEN not in place yet; it keeps trying');
  }
  return bus;
}
