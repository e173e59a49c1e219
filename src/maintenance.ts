/**
 * The node's maintenance: the retention sweep, billing housekeeping, the return of expired
 * quota holds, the orphan image sweep and the monitors' scheduler tick, each a function a part
 * of the composition root builds (src/parts/; tests call them directly) and a timer main.ts
 * starts. Not the async capture jobs (domain/jobs/, adapters/jobs/): these are the node's own
 * chores.
 */

import type { RunExclusive } from './adapters/db/exclusive.ts';
import type { PrunableCounters } from './adapters/limits/postgres.ts';
import type { Metrics } from './adapters/metrics/metrics.ts';
import { BOUNDS } from './domain/bounds.ts';
import { sweepExpired } from './domain/captures/sweep-expired.ts';
import { sweepOrphanImages } from './domain/captures/sweep-orphan-images.ts';
import type { ImageStorage } from './domain/image-storage.ts';
import type { Store } from './domain/store.ts';
import type { Logger } from './lib/logger.ts';
import { type Clock, MINUTE_MS } from './lib/time.ts';

export interface RetentionSweepOptions {
  store: Store;
  storage: ImageStorage;
  clock: Clock;
  /** One node sweeps at a time (a PostgreSQL advisory lock; SQLite is one node). */
  runExclusive: RunExclusive;
  /** Counters kept in the database (PostgreSQL without Redis): old windows are pruned too. */
  counters: PrunableCounters | null;
  metrics: Metrics;
  logger: Logger;
}

/**
 * One retention sweep: expired records and their images, old counter windows, expired
 * sessions. Claiming rows with DELETE ... RETURNING already makes each image's deletion
 * happen once; the exclusive run keeps nodes from sweeping side by side. How many records
 * it deleted (0 when another node was sweeping).
 */
export function createRetentionSweep(options: RetentionSweepOptions): () => Promise<number> {
  const { store, storage, clock, metrics, logger } = options;
  return async () => {
    const outcome = await options.runExclusive('retention-sweeper', async () => {
      const swept = await sweepExpired(
        { store, storage, clock },
        {
          onError: (err, key) => logger.warn({ err, key }, 'could not delete an expired image'),
        },
      );
      await options.counters?.prune(Date.now());
      await store.sessions.deleteExpired(clock());
      // Finished async jobs and webhook deliveries (their attempts go with them).
      await store.jobs.prune(clock() - BOUNDS.jobs.recordRetentionMs);
      await store.batches.prune(clock() - BOUNDS.jobs.recordRetentionMs);
      await store.webhooks.prune(clock() - BOUNDS.jobs.recordRetentionMs);
      // Monitor runs whose image the sweep took (or that had none) go after the same wait.
      await store.monitors.pruneRuns(clock() - BOUNDS.jobs.recordRetentionMs);
      return swept;
    });
    metrics.sweeps.inc({ outcome: outcome.ran ? 'ran' : 'skipped' });
    if (!outcome.ran) return 0;
    metrics.sweptImages.inc(outcome.value);
    return outcome.value;
  };
}

/**
 * One orphan sweep (sweep-orphan-images.ts): stored images older than `minAgeMs` that no
 * record points to are deleted, one node at a time. How many (0 when another node was
 * sweeping).
 */
export function createOrphanSweep(options: {
  store: Store;
  storage: ImageStorage;
  clock: Clock;
  runExclusive: RunExclusive;
  minAgeMs: number;
  logger: Logger;
}): () => Promise<number> {
  const { store, storage, clock, logger, minAgeMs } = options;
  const resume = { cursor: null as string | null };
  return async () => {
    const outcome = await options.runExclusive('orphan-sweeper', () =>
      sweepOrphanImages(
        { store, storage, clock },
        {
          minAgeMs,
          resume,
          onError: (err, key) => logger.warn({ err, key }, 'could not delete an orphan image'),
        },
      ),
    );
    return outcome.ran ? outcome.value : 0;
  };
}

/**
 * Billing housekeeping: the local provider's renewals and period ends (when it is the
 * provider), and forgetting applied event ids past their retention. How many subscriptions
 * moved.
 */
export function createBillingHousekeeping(options: {
  store: Store;
  clock: Clock;
  local: { settleDue(): Promise<number> } | null;
}): () => Promise<number> {
  const { store, clock, local } = options;
  return async () => {
    const moved = local ? await local.settleDue() : 0;
    await store.billing.pruneEvents(clock() - BOUNDS.billing.eventRetentionMs);
    return moved;
  };
}

/** The timers startMaintenance runs. */
export interface Maintenance {
  stop(): void;
}

/** The chores, each built by a part (parts/maintenance.ts, parts/billing.ts, parts/monitors.ts). */
export interface MaintenanceTasks {
  sweep(): Promise<number>;
  settleBilling(): Promise<number>;
  returnHolds(): Promise<number>;
  sweepOrphans(): Promise<number>;
  /** The monitors due now (domain/monitors/run-due-monitors.ts). */
  runMonitors(): Promise<number>;
}

export interface MaintenanceOptions {
  sweepIntervalMs: number;
  holdSweepMs: number;
  orphanSweepMs: number;
  logger: Logger;
}

/**
 * Runs the sweep every `sweepIntervalMs`, billing housekeeping every minute, the return of
 * expired quota holds every `holdSweepMs` (on every node, from the start: a restarted node
 * gives back what it held before it died), and the orphan image sweep every
 * `orphanSweepMs`, until stopped.
 */
export function startMaintenance(
  tasks: MaintenanceTasks,
  options: MaintenanceOptions,
): Maintenance {
  const { logger } = options;
  const orphans = setInterval(() => {
    tasks
      .sweepOrphans()
      .then((n) => n > 0 && logger.info({ deleted: n }, 'deleted images without a record'))
      .catch((err) => logger.warn({ err }, 'orphan image sweep failed'));
  }, options.orphanSweepMs);
  orphans.unref();
  const returnHolds = () => {
    tasks
      .returnHolds()
      .then((n) => n > 0 && logger.info({ returned: n }, 'returned units of expired holds'))
      .catch((err) => logger.warn({ err }, 'returning expired quota holds failed'));
  };
  returnHolds();
  const holds = setInterval(returnHolds, options.holdSweepMs);
  holds.unref();
  const sweeper = setInterval(() => {
    tasks
      .sweep()
      .then((n) => n > 0 && logger.info({ swept: n }, 'retention sweep'))
      .catch((err) => logger.error({ err }, 'retention sweep failed'));
  }, options.sweepIntervalMs);
  // Monitors: every node ticks; the store's claim lets one node have each slot. A tick that
  // is still running its claims is not started over.
  let ticking = false;
  const monitors = setInterval(() => {
    if (ticking) return;
    ticking = true;
    tasks
      .runMonitors()
      .catch((err) => logger.error({ err }, 'monitor tick failed'))
      .finally(() => {
        ticking = false;
      });
  }, BOUNDS.monitors.tickMs);
  monitors.unref();
  const billing = setInterval(() => {
    tasks.settleBilling().catch((err) => logger.error({ err }, 'billing housekeeping failed'));
  }, MINUTE_MS);
  sweeper.unref();
  billing.unref();
  return {
    stop: () => {
      clearInterval(sweeper);
      clearInterval(billing);
      clearInterval(holds);
      clearInterval(orphans);
      clearInterval(monitors);
    },
  };
}
