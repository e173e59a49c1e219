/**
 * The maintenance part: the node's chores (maintenance.ts) built on the other parts, each a
 * function tests call directly and a timer main.ts starts (startMaintenance). The timers are
 * not started here: main.ts starts them once the app is built and stops them first.
 */
import type { DatabaseHandle } from '../adapters/db/connect.ts';
import { createExclusiveRunner } from '../adapters/db/exclusive.ts';
import type { Metrics } from '../adapters/metrics/metrics.ts';
import type { Config } from '../config/config.ts';
import type { DomainContext } from '../domain/context.ts';
import type { ImageStorage } from '../domain/image-storage.ts';
import { returnExpiredHolds } from '../domain/quota/quota-holds.ts';
import type { Logger } from '../lib/logger.ts';
import { createOrphanSweep, createRetentionSweep } from '../maintenance.ts';
import type { Part } from './part.ts';
import type { SharedState } from './shared-state.ts';

export interface MaintenanceGives {
  /** One retention sweep now. */
  sweep(): Promise<number>;
  /** Gives back the units of expired quota holds now. */
  returnHolds(): Promise<number>;
  /** Deletes stored images no record points to now. */
  sweepOrphans(): Promise<number>;
}

export function maintenancePart(options: {
  config: Config['data'];
  ctx: DomainContext;
  storage: ImageStorage;
  database: DatabaseHandle;
  /** What nodes share: counters kept in the database have their old windows pruned. */
  shared: Pick<SharedState, 'dbCounters'>;
  metrics: Metrics;
  logger: Logger;
}): Part<MaintenanceGives> {
  const { ctx, storage, logger } = options;
  const { store, clock } = ctx;
  // One node at a time for each chore (a PostgreSQL advisory lock; SQLite is one node).
  const runExclusive = createExclusiveRunner(options.database);
  return {
    gives: {
      sweep: createRetentionSweep({
        store,
        storage,
        clock,
        runExclusive,
        counters: options.shared.dbCounters,
        metrics: options.metrics,
        logger,
      }),
      returnHolds: () => returnExpiredHolds(ctx),
      sweepOrphans: createOrphanSweep({
        store,
        storage,
        clock,
        runExclusive,
        minAgeMs: options.config.orphanMinAgeMs,
        logger,
      }),
    },
  };
}
