/**
 * The DNS cache in front of the egress checks (docs/egress.md, "DNS"): answers are
 * kept for their TTL, failures for a while, one query serves every concurrent lookup of a
 * name, and lookups in flight are bounded per client so one client's slow or dead names only
 * ever wait on that client's own bound.
 */
import { BOUNDS } from '../../domain/bounds.ts';
import { type Clock, systemClock } from '../../lib/time.ts';
import type { Resolver } from './resolver.ts';

/** Why a lookup did not end in an answer within the deadline. */
export class DnsTimeoutError extends Error {
  readonly code: string = 'ETIMEOUT';
}

/**
 * The lookup timed out only waiting for a slot of the bound (the client's other lookups filled
 * it): the name was never asked, so this says nothing about the name.
 */
export class DnsBusyError extends DnsTimeoutError {
  override readonly code = 'EBUSY';
}

interface ClientState {
  running: number;
  queue: Array<() => void>;
  /** When it was last given a slot (a sequence number): the least recent goes first. */
  served: number;
}

/**
 * Slots for lookups in flight: at most `perClient` per client and `total` in all. A client at
 * its own bound waits for itself only; when the total is what holds clients back, freed
 * slots go to the waiting clients in turn.
 */
export class LookupBound {
  readonly #perClient: number;
  readonly #total: number;
  #running = 0;
  #grants = 0;
  /** Clients running or waiting. */
  readonly #clients = new Map<string, ClientState>();

  constructor(limits: { perClient: number; total: number }) {
    this.#perClient = limits.perClient;
    this.#total = limits.total;
  }

  /**
   * A slot for `client`: resolves with its release function (call it once the work ends).
   * Rejects with the signal's reason if the signal aborts while still waiting.
   */
  acquire(client: string, signal: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      signal.throwIfAborted();
      let state = this.#clients.get(client);
      if (!state) {
        state = { running: 0, queue: [], served: -1 };
        this.#clients.set(client, state);
      }
      const own = state;
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        own.running++;
        own.served = this.#grants++;
        this.#running++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          own.running--;
          this.#running--;
          this.#forget(client, own);
          this.#pump();
        });
      };
      const onAbort = (): void => {
        const at = own.queue.indexOf(grant);
        if (at !== -1) own.queue.splice(at, 1);
        this.#forget(client, own);
        reject(signal.reason);
      };
      if (own.running < this.#perClient && this.#running < this.#total) {
        grant();
        return;
      }
      own.queue.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Lookups in flight now, in all. */
  get running(): number {
    return this.#running;
  }

  /** Requests waiting for a slot now, in all. */
  get waiting(): number {
    let n = 0;
    for (const state of this.#clients.values()) n += state.queue.length;
    return n;
  }

  #forget(client: string, state: ClientState): void {
    if (state.running === 0 && state.queue.length === 0) this.#clients.delete(client);
  }

  /** Hands free slots to waiting clients, the one served least recently first. */
  #pump(): void {
    while (this.#running < this.#total) {
      let next: ClientState | undefined;
      for (const state of this.#clients.values()) {
        if (state.running >= this.#perClient || state.queue.length === 0) continue;
        if (!next || state.served < next.served) next = state;
      }
      if (!next) return;
      (next.queue.shift() as () => void)();
    }
  }
}

type Entry = { expiresAt: number } & (
  | { ok: true; addresses: string[] }
  | { ok: false; error: unknown }
);

interface Pending {
  result: Promise<string[]>;
  started: boolean;
  /** Runs the query; the slot given is released when it ends or nobody waits for it. */
  start(release: () => void): void;
  release?: () => void;
  waiters: number;
}

export interface DnsCacheOptions {
  resolver: Resolver;
  /** For TTLs (tests move it); deadlines use real timers. */
  clock?: Clock;
  timeoutMs?: number;
}

export class DnsCache {
  readonly #resolver: Resolver;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #pending = new Map<string, Pending>();

  constructor(options: DnsCacheOptions) {
    this.#resolver = options.resolver;
    this.#clock = options.clock ?? systemClock;
    this.#timeoutMs = options.timeoutMs ?? BOUNDS.dns.timeoutMs;
  }

  /**
   * The addresses of `name` (lowercase, no trailing dot), from the cache or from one query
   * shared with every concurrent lookup of the name. A query is started under `client`'s slot
   * in `bound`; a lookup that joins a query still waiting for its slot also asks for a slot of
   * its own, and the first slot granted runs it, so nobody waits on another client's bound.
   * Rejects with the resolver's error (cached like an answer), DnsTimeoutError, or DnsBusyError
   * when no slot was had in time (the name was never asked).
   */
  lookup(name: string, bound: LookupBound, client: string): Promise<string[]> {
    const cached = this.#entries.get(name);
    if (cached && cached.expiresAt > this.#clock()) {
      return cached.ok ? Promise.resolve([...cached.addresses]) : Promise.reject(cached.error);
    }
    if (cached) this.#entries.delete(name);
    let pending = this.#pending.get(name);
    if (!pending) {
      pending = this.#query(name);
      this.#pending.set(name, pending);
    }
    const query = pending;
    query.waiters++;
    const deadline = new AbortController();
    /** Aborts this lookup's own wait for a slot once it no longer needs one. */
    const slot = new AbortController();
    const timer = setTimeout(
      () =>
        deadline.abort(
          query.started
            ? new DnsTimeoutError(`no answer for ${name} in ${this.#timeoutMs} ms`)
            : new DnsBusyError(`no lookup slot for ${name} in ${this.#timeoutMs} ms`),
        ),
      this.#timeoutMs,
    );
    // A lookup alone never keeps the process alive (the request waiting on it does).
    timer.unref();
    const leave = (): void => {
      clearTimeout(timer);
      slot.abort();
      query.waiters--;
      if (query.waiters > 0) return;
      // Nobody waits any more: a query not yet started never will be, and one running gives
      // its slot back (it still fills the cache when it ends), so a client whose lookups all
      // gave up has its whole bound again.
      if (query.started) query.release?.();
      else if (this.#pending.get(name) === query) this.#pending.delete(name);
    };
    if (!query.started) {
      bound.acquire(client, slot.signal).then(
        (release) => {
          if (query.started) release();
          else query.start(release);
        },
        () => {},
      );
    }
    return new Promise<string[]>((resolve, reject) => {
      const onAbort = (): void => {
        leave();
        reject(deadline.signal.reason);
      };
      deadline.signal.addEventListener('abort', onAbort, { once: true });
      query.result.then(
        (addresses) => {
          deadline.signal.removeEventListener('abort', onAbort);
          leave();
          resolve([...addresses]);
        },
        (err: unknown) => {
          deadline.signal.removeEventListener('abort', onAbort);
          leave();
          reject(err);
        },
      );
    });
  }

  /** Names held now (answers and failures, expired ones not yet dropped included). */
  get size(): number {
    return this.#entries.size;
  }

  #query(name: string): Pending {
    let settle!: { resolve: (a: string[]) => void; reject: (e: unknown) => void };
    const result = new Promise<string[]>((resolve, reject) => {
      settle = { resolve, reject };
    });
    result.catch(() => {});
    const pending: Pending = {
      result,
      started: false,
      waiters: 0,
      start: (release) => {
        pending.started = true;
        pending.release = release;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new DnsTimeoutError(`no answer for ${name} in ${this.#timeoutMs} ms`)),
            this.#timeoutMs,
          );
          timer.unref();
        });
        Promise.race([this.#resolver.resolve(name), timeout])
          .then((answer) => {
            if (answer.addresses.length === 0) throw new Error(`no address for ${name}`);
            const ttlMs =
              answer.ttlSeconds === undefined
                ? BOUNDS.dns.unknownTtlMs
                : Math.min(
                    BOUNDS.dns.maxTtlMs,
                    Math.max(BOUNDS.dns.minTtlMs, answer.ttlSeconds * 1000),
                  );
            const addresses = [...answer.addresses];
            this.#store(name, { ok: true, addresses, expiresAt: this.#clock() + ttlMs });
            settle.resolve(addresses);
          })
          .catch((error: unknown) => {
            this.#store(name, {
              ok: false,
              error,
              expiresAt: this.#clock() + BOUNDS.dns.failureTtlMs,
            });
            settle.reject(error);
          })
          .finally(() => {
            clearTimeout(timer);
            if (this.#pending.get(name) === pending) this.#pending.delete(name);
            release();
          });
      },
    };
    return pending;
  }

  #store(name: string, entry: Entry): void {
    this.#entries.delete(name);
    this.#entries.set(name, entry);
    while (this.#entries.size > BOUNDS.dns.maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}
