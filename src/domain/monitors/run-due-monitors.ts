import { BOUNDS } from '../bounds.ts';
import type { Every } from './monitor-rules.ts';
import { nextRunAt } from './monitor-rules.ts';
import type { MonitorContext } from './ports.ts';
import { startRun } from './run-monitor.ts';

/**
 * One scheduler tick (docs/api.md, "Monitors"): claims the monitors due now, each slot once
 * across every node (the store moves a claimed monitor's due time with its row locked), and
 * starts their runs: each a job on the async capture queue, which the workers of every node
 * take at their concurrency, so a crowd of due monitors waits in the queue rather than
 * crowding the browsers. The next due time is computed from now, so slots missed while every
 * node was down give one run. Resolves once the runs are queued; how many it started.
 */
export async function runDueMonitors(
  ctx: MonitorContext,
  onError: (err: unknown, monitorId: string) => void = () => {},
): Promise<number> {
  const now = ctx.clock();
  // A run whose job ended without ending it (its node stopped between the two) is failed.
  await ctx.store.monitors.failStale(
    now - 2 * ctx.renderTimeoutMs,
    'the run was interrupted (its node stopped)',
  );
  const { claimBatch, claimsPerTick, startsAtOnce } = BOUNDS.monitors;
  let started = 0;
  for (let claimed = 0; claimed < claimsPerTick; ) {
    const due = await ctx.store.monitors.claimDue(now, claimBatch, (m) =>
      nextRunAt(m.id, m.every as Every, now),
    );
    claimed += due.length;
    for (let i = 0; i < due.length; i += startsAtOnce) {
      const starts = due.slice(i, i + startsAtOnce).map((monitor) =>
        // One monitor that cannot start (its account's row locked, the database away for a
        // moment) loses this slot, not the others theirs: it runs at its next one.
        startRun(ctx, monitor, { scheduled: true }).then(
          (run) => (run === null ? 0 : 1),
          (err: unknown) => {
            onError(err, monitor.id);
            return 0;
          },
        ),
      );
      for (const n of await Promise.all(starts)) started += n;
    }
    if (due.length < claimBatch) break;
  }
  return started;
}
