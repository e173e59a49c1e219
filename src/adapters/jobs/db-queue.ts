import { hostname } from 'node:os';
import type { JobQueue } from '../../domain/jobs/ports.ts';
import type { CaptureJob } from '../../domain/store.ts';
import { randomBase62 } from '../../lib/crypto.ts';
import type { Logger } from '../../lib/logger.ts';
import { type Pump, startPump } from './pump.ts';

/** A name for this process's leases: which node holds a job, in logs and rows. */
export const workerName = (): string => `${hostname()}:${process.pid}:${randomBase62(6)}`;

/**
 * The durable queue in the database (embedded SQLite; PostgreSQL without Redis): a job is a
 * row, workers on every node poll for runnable rows and take one with a lease
 * (store.jobs.claim: SKIP LOCKED on PostgreSQL), renewing it while they run. A node that dies
 * stops renewing; once its lease runs out another node takes the job over. Dispatching only
 * wakes this node's workers: the row is already the queue.
 */
export function createDbJobQueue(options: {
  concurrency: number;
  pollMs: number;
  claim: () => Promise<CaptureJob | null>;
  /** Runs a claimed job; a requeued one is found again by the polling once it is due. */
  run: (job: CaptureJob) => Promise<unknown>;
  /** Gives back a job taken while the queue was being closed, for another node at once. */
  release: (job: CaptureJob) => Promise<unknown>;
  logger: Logger;
}): JobQueue & { close(): Promise<void> } {
  const pump: Pump | null =
    options.concurrency > 0
      ? startPump({
          name: 'capture jobs',
          concurrency: options.concurrency,
          pollMs: options.pollMs,
          take: options.claim,
          run: async (job) => {
            await options.run(job);
          },
          release: async (job) => {
            await options.release(job);
          },
          logger: options.logger,
        })
      : null;
  return {
    async dispatch() {
      pump?.wake();
    },
    close: async () => {
      await pump?.close();
    },
  };
}
