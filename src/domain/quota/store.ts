/**
 * The monthly quota's units and the holds of captures in flight, on the database. A port of the
 * domain (the Kysely adapters in adapters/db serve SQLite and PostgreSQL); ../store.ts composes
 * the ports into the Store and re-exports their types.
 */
/**
 * Units of one account's month (`period`, YYYY-MM), and the day of the usage chart they are
 * counted in (YYYY-MM-DD; none: not charted).
 */
export interface QuotaUnit {
  userId: number;
  period: string;
  day?: string | undefined;
}

export interface QuotaStore {
  /**
   * Atomically takes one unit of the account's monthly quota if fewer than `limit` were
   * used, and counts it in its day's captures (the usage chart) in the same write: the new
   * count, or null when the quota is exhausted (nothing is counted then). Exact under any
   * concurrency on either database, however the adapter groups concurrent reservations.
   */
  reserve(unit: QuotaUnit, options: { limit: number }): Promise<number | null>;
  /**
   * The same, with a hold on the unit until `until` written in the same write (a capture
   * about to render): a hold neither kept, released nor renewed by then is given back by
   * `returnExpired` (its node died). Null when the quota is exhausted.
   */
  reserveHeld(
    unit: QuotaUnit,
    options: { limit: number; until: number },
  ): Promise<{ used: number; hold: number } | null>;
  /** Gives a reserved unit back (the capture failed), out of its day's count too. */
  release(unit: QuotaUnit): Promise<void>;
  /** Gives a held unit back, once: only if its hold still exists (not kept, not swept). */
  releaseHeld(hold: number): Promise<void>;
  /** The capture delivered: its unit is kept for good. False when the hold was swept. */
  keep(hold: number): Promise<boolean>;
  /** Extends live holds (this node's captures in flight) to `until`. */
  renew(holds: readonly number[], until: number): Promise<void>;
  /** Gives back the units of up to `limit` holds expired at `now`, each once; how many. */
  returnExpired(now: number, limit: number): Promise<number>;
  used(userId: number, period: string): Promise<number>;
  days(
    userId: number,
    fromDay: string,
    toDay: string,
  ): Promise<Array<{ day: string; count: number }>>;
}
