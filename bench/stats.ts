/** Order statistics and the target record shared by the benchmark's parts. */

/** One of the targets: what was measured, against what, met or not. */
export interface Target {
  name: string;
  value: string;
  threshold: string;
  met: boolean;
  /** Printed beside it (what it measured alongside, e.g. the settle wait). */
  beside?: string;
}

/** The nearest-rank percentile of `sorted` (ascending); 0 for no values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] as number;
}

/** The median (the mean of the two middle values for an even count); 0 for no values. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return 0;
  return ((s[(s.length - 1) >> 1] as number) + (s[s.length >> 1] as number)) / 2;
}
