import type { Redis } from 'ioredis';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { AppError } from '../../domain/errors.ts';
import type { CounterFactory, WindowCounter } from '../../domain/limits.ts';
import { rlfCounter } from './rlf-counter.ts';

/**
 * Counters shared by every node through Redis (atomic Lua in rate-limiter-flexible). When
 * Redis cannot answer, a limit is never silently lifted: the request gets 503 with
 * Retry-After, and service resumes by itself once Redis is back.
 */
export function createRedisCounters(client: Redis, prefix = 'shotsmith:'): CounterFactory {
  return {
    create({ name, limit, windowMs }) {
      const limiter = new RateLimiterRedis({
        storeClient: client,
        keyPrefix: `${prefix}${name}`,
        points: limit,
        duration: Math.max(1, Math.ceil(windowMs / 1000)),
      });
      return failClosed(rlfCounter(limiter, limit));
    },
  };
}

function failClosed(counter: WindowCounter): WindowCounter {
  const guard =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await fn(...args);
      } catch (err) {
        if (err instanceof AppError) throw err;
        throw new AppError('overloaded', 'rate limiter unavailable, retry shortly', {
          headers: { 'Retry-After': '5' },
          cause: err,
        });
      }
    };
  return {
    limit: counter.limit,
    take: guard(counter.take),
    peek: guard(counter.peek),
    refund: guard(counter.refund),
    reset: guard(counter.reset),
  };
}
