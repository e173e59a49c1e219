/**
 * The Redis part, when REDIS_URL is set (scale-out): the connections the shared state
 * (shared-state.ts) goes through. Without it, it gives null and asks nothing of the node.
 */
import type { RedisClients } from '../adapters/redis/connect.ts';
import type { Config } from '../config/config.ts';
import type { Logger } from '../lib/logger.ts';
import type { Part } from './part.ts';

/** How long the boot waits for Redis before it goes on (it reconnects by itself). */
const CONNECT_WAIT_MS = 5_000;

export async function redisPart(options: {
  config: Pick<Config, 'redisUrl'>;
  logger: Logger;
}): Promise<Part<RedisClients | null>> {
  const url = options.config.redisUrl;
  if (!url) return { gives: null };
  // Loaded only when configured (ioredis and its dependencies take a while to load).
  const { connectRedis } = await import('../adapters/redis/connect.ts');
  const redis = connectRedis(url);
  if (!(await redis.ready(CONNECT_WAIT_MS))) {
    options.logger.warn({}, 'Redis is not reachable yet; limits answer 503 until it is');
  }
  return {
    gives: redis,
    ready: { name: 'redis', check: redis.ping },
    close: () => redis.close(),
  };
}
