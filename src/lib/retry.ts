/** Waits before each background retry of a compensation: about four minutes in all. */
export const COMPENSATION_DELAYS_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 60_000, 60_000];

/**
 * Runs `fn` now and, if it fails, again in the background after each delay in turn, until
 * it succeeds or the delays run out (`onGiveUp`). For compensations that must not be lost
 * to a short outage, such as giving a quota unit back while the database is unreachable;
 * the caller answers at once either way. Timers are unref'd: they never hold a process.
 */
export async function retryInBackground(
  fn: () => Promise<void>,
  delaysMs: readonly number[] = COMPENSATION_DELAYS_MS,
  onGiveUp?: (err: unknown) => void,
): Promise<void> {
  try {
    await fn();
  } catch (first) {
    let attempt = 0;
    const next = (err: unknown) => {
      const delay = delaysMs[attempt++];
      if (delay === undefined) {
        onGiveUp?.(err);
        return;
      }
      setTimeout(() => {
        fn().catch(next);
      }, delay).unref();
    };
    next(first);
  }
}
