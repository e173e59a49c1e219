import { AppError } from '../errors.ts';
import type { MonitorRun, User } from '../store.ts';
import { getMonitor } from './manage-monitors.ts';
import type { MonitorContext } from './ports.ts';
import { startRun } from './run-monitor.ts';

/**
 * POST /v1/monitors/{id}/run: a run now, outside the schedule (its slot stays). Answered
 * once the run is recorded and its job queued; a worker runs it, and
 * GET /v1/monitors/{id}/runs shows how it ended.
 */
export async function runMonitorNow(
  ctx: MonitorContext,
  options: { user: User; id: string },
): Promise<MonitorRun> {
  const monitor = await getMonitor(ctx, options);
  const run = await startRun(ctx, monitor, { scheduled: false });
  if (run === null) throw new AppError('not_found', 'monitor not found');
  return run;
}
