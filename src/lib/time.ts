/** Milliseconds since the epoch, UTC. Injected everywhere so tests can move time. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

export const MINUTE_MS = 60_000;
export const HOUR_MS = 60 * MINUTE_MS;
export const DAY_MS = 24 * HOUR_MS;

export const toIso = (ms: number): string => new Date(ms).toISOString();

/** Start of the calendar month (UTC) containing `ms`, and the start of the next one. */
export function monthBounds(ms: number): { start: number; end: number; key: string } {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const key = `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
  return { start, end, key };
}

/** Start of the UTC day containing `ms`, the next midnight, and a YYYY-MM-DD key. */
export function dayBounds(ms: number): { start: number; end: number; key: string } {
  const d = new Date(ms);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  return { start, end: start + DAY_MS, key: new Date(start).toISOString().slice(0, 10) };
}
