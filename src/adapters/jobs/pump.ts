import type { Logger } from '../../lib/logger.ts';

/**
 * A loop that keeps up to `concurrency` tasks running, taking work with `take()` whenever a
 * slot is free: on a timer (`pollMs`), when woken (work was queued on this node), and when a
 * task ends. What the database queue's workers and the webhook deliverer run on.
 */
export interface Pump {
  /** Look for work now (coalesced: a wake during a look makes one more look). */
  wake(): void;
  /**
   * Stops taking work and waits for the running tasks; `abandon` aborts their signal first
   * (a stopping node lets go of what it would not finish). Calling it again waits again.
   */
  close(options?: { abandon?: boolean }): Promise<void>;
}

export function startPump<T>(options: {
  name: string;
  concurrency: number;
  pollMs: number;
  /** The next piece of work, or null when there is none. */
  take(): Promise<T | null>;
  /** `signal` aborts when the pump is closed with `abandon`. */
  run(work: T, signal: AbortSignal): Promise<void>;
  /** Gives back work taken while the pump was being closed (it never ran). */
  release?(work: T): Promise<void>;
  logger: Logger;
}): Pump {
  const running = new Set<Promise<void>>();
  const abandon = new AbortController();
  let closed = false;
  /** The look in progress (a close waits for it: it may be taking work). */
  let looking: Promise<void> | null = null;
  let again = false;

  const look = (): Promise<void> => {
    if (looking) {
      again = true;
      return looking;
    }
    looking = lookNow().finally(() => {
      looking = null;
    });
    return looking;
  };
  const lookNow = async (): Promise<void> => {
    try {
      do {
        again = false;
        while (!closed && running.size < options.concurrency) {
          const work = await options.take();
          if (work === null) break;
          if (closed) {
            await options.release?.(work);
            break;
          }
          const task: Promise<void> = options
            .run(work, abandon.signal)
            .catch((err: unknown) => options.logger.warn({ err }, `${options.name}: task failed`))
            .finally(() => {
              running.delete(task);
              if (!closed) void look();
            });
          running.add(task);
        }
      } while (again && !closed);
    } catch (err) {
      // The database is away: the next tick tries again.
      options.logger.warn({ err }, `${options.name}: could not take work`);
    }
  };

  const timer = setInterval(() => void look(), options.pollMs);
  timer.unref();
  void look();
  return {
    wake: () => void look(),
    async close(closeOptions = {}) {
      closed = true;
      clearInterval(timer);
      if (closeOptions.abandon) abandon.abort();
      await looking;
      await Promise.allSettled([...running]);
    },
  };
}
