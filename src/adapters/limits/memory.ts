import { RateLimiterMemory } from 'rate-limiter-flexible';
import type { CounterFactory } from '../../domain/limits.ts';
import { rlfCounter } from './rlf-counter.ts';

/** In-process counters: exact on one node, the embedded default. */
export function createMemoryCounters(): CounterFactory {
  return {
    create({ name, limit, windowMs }) {
      const limiter = new RateLimiterMemory({
        keyPrefix: name,
        points: limit,
        duration: Math.max(1, Math.ceil(windowMs / 1000)),
      });
      return rlfCounter(limiter, limit);
    },
  };
}
