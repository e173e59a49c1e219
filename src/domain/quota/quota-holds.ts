import type { Clock } from '../../lib/time.ts';
import type { QuotaStore } from '../store.ts';

/**
 * The holds of this node's captures in flight (docs/plans-and-limits.md, "Plans"): a unit
 * reserved for a render is held in the database until `leaseMs` from now, and the node
 * renews its live holds every third of that, in one statement, while any are live. A hold
 * expires only when its node stopped renewing it (it died, or lost the database for a whole
 * lease); `returnExpiredHolds`, on every node, gives expired holds' units back.
 */
export class QuotaHolds {
  readonly leaseMs: number;
  readonly #store: QuotaStore;
  readonly #clock: Clock;
  readonly #live = new Set<number>();
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(options: { store: QuotaStore; clock: Clock; leaseMs: number }) {
    this.#store = options.store;
    this.#clock = options.clock;
    this.leaseMs = options.leaseMs;
  }

  /** When a hold taken now expires unless renewed. */
  until(): number {
    return this.#clock() + this.leaseMs;
  }

  /** Renews `hold` from now on, until `forget`. */
  track(hold: number): void {
    this.#live.add(hold);
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      // A failed renewal is tried again at the next beat: the lease has room for two.
      this.#store.renew([...this.#live], this.until()).catch(() => {});
    }, this.leaseMs / 3);
    this.#timer.unref();
  }

  forget(hold: number): void {
    this.#live.delete(hold);
    if (this.#live.size > 0 || this.#timer === null) return;
    clearInterval(this.#timer);
    this.#timer = null;
  }
}

/**
 * Gives back the units of holds whose node stopped renewing them, in batches; how many.
 * Each hold is claimed by one sweeper (several nodes may sweep at once).
 */
export async function returnExpiredHolds(
  ctx: { store: { quota: QuotaStore }; clock: Clock },
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<number> {
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 20;
  let returned = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await ctx.store.quota.returnExpired(ctx.clock(), batchSize);
    returned += n;
    if (n < batchSize) break;
  }
  return returned;
}
