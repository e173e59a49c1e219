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
 * signal's reason). One named client may hold at most half of the list, so a burst from one
 * account cannot fill it alone. A full list refuses (overloaded, Retry-After), except a client
 * with nothing waiting: it takes the place of the newest waiter of the client with the most
 * waiting, which gets the refusal instead. So accounts that keep the list full between them
 * only ever turn each other away, never a client that sends one capture at a time.
 *
 * No render that had to wait starts with less deadline left than `minStartMs()` (the node's
 * typical render time, render-times.ts): such a capture is refused at once (overloaded,
 * Retry-After), when it arrives to a full node or when a slot would be handed to it, rather
 * than hold a slot until it times out. A capture that finds a free slot always starts.
 */
import { AppError } from '../../../domain/errors.ts';

/** How fast a client's recent demand fades: it halves every this many ms. */
const DEMAND_HALF_LIFE_MS = 5_000;
/** Clients whose recent demand is remembered (the least recently seen are forgotten first). */
const DEMAND_CLIENTS = 10_000;

/** setTimeout's largest delay; later deadlines are re-armed. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Who a slot is for, and how many slots that client may hold at once. */
export interface SlotClient {
  id: string;
  maxConcurrent: number;
}

/** Acquisitions that name no client share this one, without a limit (tests, benchmarks). */
const ANONYMOUS: SlotClient = { id: '', maxConcurrent: Number.POSITIVE_INFINITY };

interface Waiter<T> {
  /** Arrival order. */
  seq: number;
  deadline: number;
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
  new AppError(
    'render_timeout',
    'render timed out while waiting for a free browser slot (phase: queue)',
    { body: { phase: 'queue', pending_requests: [] } },
  );

export const tooLateError = (typicalMs: number): AppError =>
  new AppError(
    'overloaded',
    `the render queue is too long: less time is left than a render takes here (${Math.ceil(typicalMs / 1000)} s)`,
    { headers: { 'Retry-After': '5' } },
  );

export interface SlotQueueOptions {
  /** Captures allowed to wait; 0 refuses any capture that finds every slot taken. */
  maxQueued: number;
  /** The shortest deadline left a render may start with, read at each start (0: any). */
  minStartMs?: () => number;
}

export class SlotQueue<T> {
  readonly #idle: T[] = [];
  /** Clients with waiters, in turn order (a Map keeps insertion order). */
  readonly #groups = new Map<string, Group<T>>();
  /** Slots held per client. */
  readonly #held = new Map<string, number>();
  /** The client holding each slot handed out. */
  readonly #holders = new Map<T, string>();
  #queued = 0;
  #arrivals = 0;
  /** Each client's captures asked for lately (decaying), least recently seen first. */
  readonly #demand = new Map<string, { score: number; at: number }>();
  readonly #maxQueued: number;
  readonly #maxQueuedPerClient: number;
  readonly #minStartMs: () => number;

  constructor(options: SlotQueueOptions) {
    this.#maxQueued = options.maxQueued;
    this.#maxQueuedPerClient = Math.max(1, Math.floor(options.maxQueued / 2));
    this.#minStartMs = options.minStartMs ?? (() => 0);
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
    this.#noteDemand(client.id);
    if (Date.now() >= deadline) return Promise.reject(queueTimeoutError());
    // A free slot while others wait means every waiting client is at its limit, so a client
    // under its own limit passes none of them by taking it. It starts whatever its deadline:
    // a slot nobody waits for is taken from no one (admission is about the queue).
    if (this.#idle.length > 0 && this.heldBy(client.id) < client.maxConcurrent) {
      const free = this.#idle.shift() as T;
      this.#hand(free, client.id);
      return Promise.resolve(free);
    }
    // It would wait, and so start with even less time left: refused now, not at its deadline.
    const late = this.#late(deadline);
    if (late !== null) return Promise.reject(late);
    const waiting = this.#groups.get(client.id)?.waiters.length ?? 0;
    if (client !== ANONYMOUS && waiting >= this.#maxQueuedPerClient) {
      return Promise.reject(queueFullError());
    }
    if (this.#queued >= this.#maxQueued && !(waiting === 0 && this.#makeRoom())) {
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
        seq: this.#arrivals++,
        deadline,
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
      // Its longest waiter with time enough left for a render; the ones without leave now.
      let waiter = group.waiters.shift();
      while (waiter !== undefined) {
        this.#queued--;
        const late = this.#late(waiter.deadline);
        if (late === null) break;
        waiter.cleanup();
        waiter.reject(late);
        waiter = group.waiters.shift();
      }
      // To the back of the rotation (or out of it, with nobody left waiting).
      this.#groups.delete(clientId);
      if (group.waiters.length > 0) this.#groups.set(clientId, group);
      if (waiter === undefined) continue;
      this.#hand(slot, clientId);
      waiter.cleanup();
      waiter.resolve(slot);
      return;
    }
    this.#idle.push(slot);
  }

  /** The refusal of a render that would start with less time left than one takes, or null. */
  #late(deadline: number): AppError | null {
    const typical = this.#minStartMs();
    return typical > 0 && deadline - Date.now() < typical ? tooLateError(typical) : null;
  }

  /**
   * Refuses the newest waiter of the client with the most waiting to make room in a full
   * list; false when nobody waits. Among clients with as many waiting (one each, when many
   * clients flood a short list), the one that asked for the most captures lately goes
   * first, then the newest waiter: flooding clients that turn each other away never take
   * the place of a client sending one capture at a time.
   */
  #makeRoom(): boolean {
    const now = Date.now();
    let most: Group<T> | undefined;
    let mostId = '';
    let mostDemand = 0;
    for (const [clientId, group] of this.#groups) {
      const count = group.waiters.length;
      const demand = this.#demandOf(clientId, now);
      if (
        most === undefined ||
        count > most.waiters.length ||
        (count === most.waiters.length &&
          (demand > mostDemand ||
            (demand === mostDemand &&
              (group.waiters.at(-1)?.seq ?? 0) > (most.waiters.at(-1)?.seq ?? 0))))
      ) {
        most = group;
        mostId = clientId;
        mostDemand = demand;
      }
    }
    const newest = most?.waiters.pop();
    if (most === undefined || newest === undefined) return false;
    this.#queued--;
    if (most.waiters.length === 0) this.#groups.delete(mostId);
    newest.cleanup();
    newest.reject(queueFullError());
    return true;
  }

  #demandOf(clientId: string, now: number): number {
    const entry = this.#demand.get(clientId);
    return entry ? entry.score * 2 ** (-(now - entry.at) / DEMAND_HALF_LIFE_MS) : 0;
  }

  #noteDemand(clientId: string): void {
    const now = Date.now();
    const score = this.#demandOf(clientId, now) + 1;
    // Re-inserted, so the Map stays in order of last sight and the oldest is dropped first.
    this.#demand.delete(clientId);
    this.#demand.set(clientId, { score, at: now });
    if (this.#demand.size > DEMAND_CLIENTS) {
      const oldest = this.#demand.keys().next().value;
      if (oldest !== undefined) this.#demand.delete(oldest);
    }
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
