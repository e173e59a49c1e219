/**
 * A fixed set of slots shared fairly among clients (docs/security.md, "Fair share"),
 * with one bounded wait list for all of them.
 *
 * Each capture names its client (an account, or a demo IP) and the most slots that client may
 * hold at once (its plan's `concurrent_renders`). A client under its limit takes a free slot at
 * once; otherwise it waits. A freed slot goes to the waiting clients in turn: the first client
 * in the rotation that is under its limit gets it for its longest waiter (first come, first
 * served within a client) and moves to the back of the rotation. So one client with many
 * captures never holds every slot while another waits, and a newcomer waits at most one freed
 * slot per client ahead of it.
 *
 * A waiter leaves the list when its deadline passes (render_timeout) or its signal aborts (the
 * signal's reason); a full list refuses at once (overloaded, Retry-After). One named client may
 * hold at most half of the list, so a burst from one account cannot fill it and turn every
 * other account away with 503s.
 */
import { AppError } from '../../domain/errors.ts';

/** setTimeout's largest delay; later deadlines are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** Who a slot is for, and how many slots that client may hold at once. */
export interface SlotClient {
  id: string;
  maxConcurrent: number;
}

/** Acquisitions that name no client share this one, without a limit (tests, benchmarks). */
const ANONYMOUS: SlotClient = { id: '', maxConcurrent: Number.POSITIVE_INFINITY };

interface Waiter<T> {
  resolve(slot: T): void;
  reject(err: unknown): void;
  cleanup(): void;
}

/** A client's waiters, oldest first, and its limit as its latest request gave it. */
interface Group<T> {
  waiters: Waiter<T>[];
  maxConcurrent: number;
}

export const queueFullError = (): AppError =>
  new AppError('overloaded', 'render queue is full', { headers: { 'Retry-After': '5' } });

export const queueTimeoutError = (): AppError =>
  new AppError('render_timeout', 'render timed out while waiting for a free browser slot');

export class SlotQueue<T> {
  readonly #idle: T[] = [];
  /** Clients with waiters, in turn order (a Map keeps insertion order). */
  readonly #groups = new Map<string, Group<T>>();
  /** Slots held per client. */
  readonly #held = new Map<string, number>();
  /** The client holding each slot handed out. */
  readonly #holders = new Map<T, string>();
  #queued = 0;
  readonly #maxQueued: number;
  readonly #maxQueuedPerClient: number;

  constructor(maxQueued: number) {
    this.#maxQueued = maxQueued;
    this.#maxQueuedPerClient = Math.max(1, Math.floor(maxQueued / 2));
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.#queued;
  }

  /** Slots free right now. */
  get idle(): number {
    return this.#idle.length;
  }

  /** Slots `clientId` holds right now. */
  heldBy(clientId: string): number {
    return this.#held.get(clientId) ?? 0;
  }

  acquire(deadline: number, signal?: AbortSignal, client: SlotClient = ANONYMOUS): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (Date.now() >= deadline) return Promise.reject(queueTimeoutError());
    // A free slot while others wait means every waiting client is at its limit, so a client
    // under its own limit passes none of them by taking it.
    if (this.#idle.length > 0 && this.heldBy(client.id) < client.maxConcurrent) {
      const free = this.#idle.shift() as T;
      this.#hand(free, client.id);
      return Promise.resolve(free);
    }
    if (this.#queued >= this.#maxQueued) return Promise.reject(queueFullError());
    const waiting = this.#groups.get(client.id)?.waiters.length ?? 0;
    if (client !== ANONYMOUS && waiting >= this.#maxQueuedPerClient) {
      return Promise.reject(queueFullError());
    }
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const leave = (err: unknown): void => {
        const group = this.#groups.get(client.id);
        const index = group ? group.waiters.indexOf(waiter) : -1;
        if (group && index !== -1) {
          group.waiters.splice(index, 1);
          this.#queued--;
          if (group.waiters.length === 0) this.#groups.delete(client.id);
        }
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
      const group = this.#groups.get(client.id);
      if (group) {
        group.waiters.push(waiter);
        group.maxConcurrent = client.maxConcurrent;
      } else {
        this.#groups.set(client.id, { waiters: [waiter], maxConcurrent: client.maxConcurrent });
      }
      this.#queued++;
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  }

  /**
   * Gives the slot to the next waiting client in turn that is under its limit (its longest
   * waiter), or puts it back among the free ones.
   */
  release(slot: T): void {
    const holder = this.#holders.get(slot);
    if (holder !== undefined) {
      this.#holders.delete(slot);
      const held = this.heldBy(holder) - 1;
      if (held > 0) this.#held.set(holder, held);
      else this.#held.delete(holder);
    }
    for (const [clientId, group] of this.#groups) {
      if (this.heldBy(clientId) >= group.maxConcurrent) continue;
      const waiter = group.waiters.shift() as Waiter<T>;
      this.#queued--;
      // To the back of the rotation (or out of it, with nobody left waiting).
      this.#groups.delete(clientId);
      if (group.waiters.length > 0) this.#groups.set(clientId, group);
      this.#hand(slot, clientId);
      waiter.cleanup();
      waiter.resolve(slot);
      return;
    }
    this.#idle.push(slot);
  }

  #hand(slot: T, clientId: string): void {
    this.#holders.set(slot, clientId);
    this.#held.set(clientId, this.heldBy(clientId) + 1);
  }

  /** Removes and returns every free slot (to service them while nobody can acquire them). */
  takeIdle(): T[] {
    return this.#idle.splice(0);
  }

  /** Fails every waiter with `err` (shutdown). */
  rejectAll(err: unknown): void {
    const groups = [...this.#groups.values()];
    this.#groups.clear();
    this.#queued = 0;
    for (const group of groups) {
      for (const waiter of group.waiters) {
        waiter.cleanup();
        waiter.reject(err);
      }
    }
  }
}
