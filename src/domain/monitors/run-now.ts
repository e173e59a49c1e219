import type { MonitorRun, User } from '../store.ts';
import { getMonitor } from './manage-monitors.ts';
import type { MonitorContext } from './ports.ts';
import { startRun } from './run-monitor.ts';

/**
 * POST /v1/monitors/{id}/run: a run now, outside the schedule (its slot stays). Answered
 * once the run is recorded; the run goes on in the background on this node, and
 * GET /v1/monitors/{id}/runs shows how it ended.
 */
export async function runMonitorNow(
  ctx: MonitorContext,
  options: { user: User; id: string; onError: (err: unknown) => void },
): Promise<MonitorRun> {
  const monitor = await getMonitor(ctx, options);
  const { run, done } = await startRun(ctx, monitor);
  done.catch(options.onError);
  return run;
}
