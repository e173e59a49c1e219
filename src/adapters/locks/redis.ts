import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RenderLocks } from '../../domain/captures/ports.ts';

/** Deletes the lock only while it is still ours (it may have expired and been retaken). */
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0`;

/**
 * Render locks shared by every node: `SET key token NX PX ttl`. The expiry bounds how long
 * a node that died mid-render can hold a key; the others then render it themselves.
 */
export function createRedisRenderLocks(client: Redis, prefix = 'shotsmith:'): RenderLocks {
  const lockKey = (key: string) => `${prefix}render:${key}`;
  return {
    async acquire(key, ttlMs) {
      const token = randomBytes(16).toString('hex');
      const taken = await client.set(lockKey(key), token, 'PX', Math.ceil(ttlMs), 'NX');
      if (taken !== 'OK') return null;
      return {
        release: async () => {
          await client.eval(RELEASE, 1, lockKey(key), token);
        },
      };
    },
    async held(key) {
      return (await client.exists(lockKey(key))) === 1;
    },
  };
}
