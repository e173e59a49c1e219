import type { App, RouteDeps } from '../../types.ts';
import { registerCreateMonitor } from './create.ts';
import { registerDeleteMonitor } from './delete.ts';
import { registerGetMonitor } from './get.ts';
import { registerListMonitors } from './list.ts';
import { registerListMonitorRuns } from './list-runs.ts';
import { registerRunMonitor } from './run.ts';
import type { MonitorSurface } from './surface.ts';
import { registerUpdateMonitor } from './update.ts';

/** Every monitor operation on one surface (surface.ts), in the API document's order. */
export function registerMonitors(app: App, deps: RouteDeps, surface: MonitorSurface): void {
  registerCreateMonitor(app, deps, surface);
  registerListMonitors(app, deps, surface);
  registerGetMonitor(app, deps, surface);
  registerUpdateMonitor(app, deps, surface);
  registerDeleteMonitor(app, deps, surface);
  registerRunMonitor(app, deps, surface);
  registerListMonitorRuns(app, deps, surface);
}
