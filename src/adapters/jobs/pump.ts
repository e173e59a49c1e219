/**
 * A loop that keeps up to `concurrency` tasks running, taking work with `take()` whenever a
 * slot is free: on a timer (`pollMs`), when woken (work was queued on this node), and when a
 * task ends. What the database queue's workers and the webhook deliverer run on.
 */
export interface Pump {
  /** Look for work now (coalesced: a wake during a look makes one more look). */
  wake(): void;
  /** Stops taking work and waits for the running tasks. */
  close(): Promise<void>;
}

export interface PumpLogger {
  warn(obj: object, msg: string): void;
}

export function startPump<T>(options: {
  name: string;
  concurrency: number;
  pollMs: number;
  /** The next piece of work, or null when there is none. */
  take(): Promise<T | null>;
  run(work: T): Promise<void>;
  logger?: PumpLogger | undefined;
}): Pump {
  const running = new Set<Promise<void>>();
  let closed = false;
  let looking = false;
  let again = false;

  const look = async (): Promise<void> => {
    if (looking) {
      again = true;
      return;
    }
    looking = true;
    try {
      do {
        again = false;
        while (!closed && running.size < options.concurrency) {
          const work = await options.take();
          if (work === null || closed) break;
          const task: Promise<void> = options
            .run(work)
            .catch((err: unknown) => options.logger?.warn({ err }, `${options.name}: task failed`))
            .finally(() => {
              running.delete(task);
              if (!closed) void look();
            });
          running.add(task);
        }
      } while (again && !closed);
    } catch (err) {
      // The database is away: the next tick tries again.
      options.logger?.warn({ err }, `${options.name}: could not take work`);
    } finally {
      looking = false;
    }
  };

  const timer = setInterval(() => void look(), options.pollMs);
  timer.unref();
  void look();
  return {
    wake: () => void look(),
    async close() {
      closed = true;
      clearInterval(timer);
      await Promise.allSettled([...running]);
    },
  };
}
