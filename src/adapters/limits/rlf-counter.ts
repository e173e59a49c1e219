import { type RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import type { WindowCounter, WindowState } from '../../domain/limits.ts';

/**
 * A WindowCounter over any rate-limiter-flexible store (memory now, Redis for several
 * nodes). RLF counts fixed windows that start at a key's first point.
 */
export function rlfCounter(limiter: RateLimiterAbstract, limit: number): WindowCounter {
  const state = (res: RateLimiterRes | null): WindowState => {
    const now = Date.now();
    if (!res) return { used: 0, resetAt: now + limiter.msDuration };
    return {
      used: Math.min(res.consumedPoints, Number.MAX_SAFE_INTEGER),
      resetAt: now + Math.max(0, res.msBeforeNext),
    };
  };
  return {
    limit,
    async take(key, windowMs) {
      const options =
        windowMs === undefined ? {} : { customDuration: Math.max(1, Math.ceil(windowMs / 1000)) };
      try {
        const res = await limiter.consume(key, 1, options);
        return { ...state(res), allowed: true };
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          // RLF counts a refused point too; give it back so that a refused request never
          // counts (the demo's allowance is counted like the quota, docs/api.md)
          // and a later refund of an accepted one frees a real slot.
          await limiter.reward(key, 1);
          const s = state(err);
          return { used: Math.min(s.used, limit), resetAt: s.resetAt, allowed: false };
        }
        throw err;
      }
    },
    async peek(key) {
      return state(await limiter.get(key));
    },
    async refund(key) {
      await limiter.reward(key, 1);
    },
    async reset(key) {
      await limiter.delete(key);
    },
  };
}
