/**
 * A fixed set of slots handed out first come, first served, with a bounded wait list. A waiter
 * leaves the list when its deadline passes (render_timeout) or its signal aborts (the signal's
 * reason); a full list refuses at once (overloaded, Retry-After).
 */
import { AppError } from '../../domain/errors.ts';

/** setTimeout's largest delay; later deadlines are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

interface Waiter<T> {
  resolve(slot: T): void;
  reject(err: unknown): void;
  cleanup(): void;
}

export const queueFullError = (): AppError =>
  new AppError('overloaded', 'render queue is full', { headers: { 'Retry-After': '5' } });

export const queueTimeoutError = (): AppError =>
  new AppError('render_timeout', 'render timed out while waiting for a free browser slot');

export class SlotQueue<T> {
  readonly #idle: T[] = [];
  readonly #waiters: Waiter<T>[] = [];
  readonly #maxQueued: number;

  constructor(maxQueued: number) {
    this.#maxQueued = maxQueued;
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.#waiters.length;
  }

  /** Slots free right now. */
  get idle(): number {
    return this.#idle.length;
  }

  acquire(deadline: number, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (Date.now() >= deadline) return Promise.reject(queueTimeoutError());
    const free = this.#idle.shift();
    if (free !== undefined) return Promise.resolve(free);
    if (this.#waiters.length >= this.#maxQueued) return Promise.reject(queueFullError());
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (err: unknown): void => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        waiter.cleanup();
        reject(err);
      };
      const onAbort = (): void => leave(signal?.reason);
      const arm = (): void => {
        const left = deadline - Date.now();
        if (left <= 0) {
          leave(queueTimeoutError());
          return;
        }
        timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
      };
      const waiter: Waiter<T> = {
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  }

  /** Gives the slot to the longest waiter, or puts it back among the free ones. */
  release(slot: T): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      waiter.cleanup();
      waiter.resolve(slot);
      return;
    }
    this.#idle.push(slot);
  }

  /** Removes and returns every free slot (to service them while nobody can acquire them). */
  takeIdle(): T[] {
    return this.#idle.splice(0);
  }

  /** Fails every waiter with `err` (shutdown). */
  rejectAll(err: unknown): void {
    for (const waiter of this.#waiters.splice(0)) {
      waiter.cleanup();
      waiter.reject(err);
    }
  }
}
