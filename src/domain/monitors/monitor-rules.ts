import { createHash } from 'node:crypto';
import { randomBase62 } from '../../lib/crypto.ts';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../../lib/time.ts';
import { BOUNDS } from '../bounds.ts';

/** The intervals a monitor may run at (docs/api.md, "Monitors"). */
export const EVERY = {
  '15m': 15 * MINUTE_MS,
  '1h': HOUR_MS,
  '6h': 6 * HOUR_MS,
  '1d': DAY_MS,
  '7d': 7 * DAY_MS,
} as const;
export type Every = keyof typeof EVERY;
export const EVERY_NAMES = Object.keys(EVERY) as Every[];

export const DEFAULT_THRESHOLD = 0.001;
export const MIN_THRESHOLD = 0.0001;

/**
 * A baseline's record is kept while its monitor exists: its expiry is lifted to this (the
 * year 9999), then given back its plan's retention when a newer run replaces it; a deleted
 * monitor's images, the baseline among them, are deleted with it. The retention sweep reads
 * only `expires_at`, so nothing else changes.
 */
export const BASELINE_EXPIRES_AT = Date.UTC(9999, 11, 31);

export const newMonitorId = (): string => `mon_${randomBase62(24)}`;
export const isMonitorId = (id: string): boolean => /^mon_[0-9A-Za-z]{24}$/.test(id);
export const newRunId = (): string => `run_${randomBase62(24)}`;

/**
 * The monitor's fixed place within the first minute of each slot, from its id: monitors
 * created together do not all render at the slot's first second.
 */
export function slotOffset(id: string): number {
  const digest = createHash('sha256').update(id).digest();
  return digest.readUInt32BE(0) % BOUNDS.monitors.spreadMs;
}

/**
 * The first due time after `now`: slots are whole multiples of the interval since the epoch
 * (UTC), so every node computes the same ones; a monitor runs at its offset into a slot.
 * Computed from `now`, not from the missed due time, so slots missed while every node was
 * down run once, not once each.
 */
export function nextRunAt(id: string, every: Every, now: number): number {
  const interval = EVERY[every];
  const offset = slotOffset(id);
  const slot = Math.floor((now - offset) / interval) + 1;
  return slot * interval + offset;
}

/**
 * The token of a hosted image's URL (`{PUBLIC_URL}/images/{token}.{ext}`, `imageUrl` in
 * captures/ports.ts); null for anything else. A run's diff is found by it: its record is no
 * run's `screenshot_id`, only its `diff_url`.
 */
export function imageToken(url: string): string | null {
  return /\/images\/([A-Za-z0-9_-]{22})\.[a-z]+$/.exec(url)?.[1] ?? null;
}

/**
 * What an html monitor's answers show instead of its document (docs/api.md, "Monitors"): its
 * size in UTF-8 bytes and its SHA-256 in hex, which `sha256sum` of the file sent gives too.
 */
export function htmlDigest(html: string): { bytes: number; sha256: string } {
  return {
    bytes: Buffer.byteLength(html, 'utf8'),
    sha256: createHash('sha256').update(html, 'utf8').digest('hex'),
  };
}
