/**
 * The monitors (domain/monitors/README.md), in two halves because their runs are async
 * capture jobs: the run ends (compare, then end the run) are built first and given to the
 * jobs part, whose workers tell them when a run's job ends; the monitors' context and their
 * scheduler tick are built after it, on its queue.
 */
import { createImageComparer } from '../adapters/compare/pixel-compare.ts';
import type { CaptureContext } from '../domain/captures/ports.ts';
import type { JobQueue, MonitorRunEnds } from '../domain/jobs/ports.ts';
import type { ImageComparer, MonitorContext } from '../domain/monitors/ports.ts';
import { runDueMonitors } from '../domain/monitors/run-due-monitors.ts';
import { monitorRunEnds } from '../domain/monitors/run-monitor.ts';
import type { Logger } from '../lib/logger.ts';
import type { Part } from './part.ts';

export interface MonitorRunsGives {
  /** Compares a run's image with the baseline, off the event loop (one worker). */
  comparer: ImageComparer;
  /** What a job's worker tells when the job carrying a monitor's run ends. */
  runEnds: MonitorRunEnds;
}

export function monitorRunsPart(options: {
  capture: CaptureContext;
  logger: Logger;
}): Part<MonitorRunsGives> {
  const { logger } = options;
  const comparer = createImageComparer();
  const runEnds = monitorRunEnds(
    { ...options.capture, comparer },
    {
      onFileError: (err, key) =>
        logger.warn({ err, key }, 'could not delete a monitor run image; the orphan sweep will'),
    },
  );
  return { gives: { comparer, runEnds }, close: () => comparer.close() };
}

export interface MonitorsGives {
  ctx: MonitorContext;
  /**
   * Runs the monitors due now, each slot once across nodes (the maintenance timer's tick);
   * how many started.
   */
  runDue(): Promise<number>;
}

export function monitorsPart(options: {
  capture: CaptureContext;
  comparer: ImageComparer;
  /** The jobs part's queue, which carries each run's capture. */
  jobs: JobQueue;
  logger: Logger;
}): Part<MonitorsGives> {
  const { logger } = options;
  const ctx: MonitorContext = {
    ...options.capture,
    comparer: options.comparer,
    jobs: options.jobs,
  };
  return {
    gives: {
      ctx,
      runDue: () =>
        runDueMonitors(ctx, (err, monitor) =>
          logger.warn({ err, monitor }, 'a monitor run could not start; it runs at its next slot'),
        ),
    },
  };
}
