import { BOUNDS } from '../bounds.ts';
import type { Every } from './monitor-rules.ts';
import { nextRunAt } from './monitor-rules.ts';
import type { MonitorContext } from './ports.ts';
import { startRun } from './run-monitor.ts';

/** A run still `running` this long after it started is ended as failed. */
const STALE_RUN_MS = 10 * 60_000;

/**
 * One scheduler tick (docs/api.md, "Monitors"): claims the monitors due now, each slot once
 * across every node (the store moves a claimed monitor's due time in a compare-and-set), and
 * runs them. The next due time is computed from now, so slots missed while every node was
 * down give one run. Resolves when the tick's runs have ended; how many it started.
 */
export async function runDueMonitors(ctx: MonitorContext): Promise<number> {
  const now = ctx.clock();
  // A run outlives any render by far after this: its node stopped, and no one will end it.
  await ctx.store.monitors.failStale(
    now - Math.max(STALE_RUN_MS, 2 * ctx.renderTimeoutMs),
    'the run was interrupted (its node stopped)',
  );
  const claimed = await ctx.store.monitors.claimDue(now, BOUNDS.monitors.claimBatch, (m) =>
    nextRunAt(m.id, m.every as Every, now),
  );
  const runs = await Promise.all(claimed.map((monitor) => startRun(ctx, monitor)));
  await Promise.all(runs.map((r) => r.done));
  return runs.length;
}
