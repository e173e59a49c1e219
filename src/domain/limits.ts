/**
 * A counter over a fixed window, shared by every node when backed by Redis. Used for
 * login throttling, per-minute capture rates and the demo's daily allowance.
 */
export interface WindowState {
  /** Points consumed in the current window. */
  used: number;
  /** Epoch ms when the window resets. */
  resetAt: number;
}

export interface WindowCounter {
  readonly limit: number;
  /**
   * Atomically takes one point if fewer than `limit` were taken in the window. `windowMs`
   * overrides the window for a key's first point (the demo's window ends at UTC midnight).
   * `used` never reports more than `limit`.
   */
  take(key: string, windowMs?: number): Promise<WindowState & { allowed: boolean }>;
  peek(key: string): Promise<WindowState>;
  /** Gives back one point (a request that must not count after all). */
  refund(key: string): Promise<void>;
  reset(key: string): Promise<void>;
}

export interface CounterFactory {
  create(options: { name: string; limit: number; windowMs: number }): WindowCounter;
}
