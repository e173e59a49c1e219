import { Queue, Worker } from 'bullmq';
import type { JobQueue } from '../../domain/jobs/ports.ts';
import type { CaptureJob, JobStatus } from '../../domain/store.ts';
import type { Logger } from '../../lib/logger.ts';

const QUEUE = 'captures';

/**
 * Thrown to have BullMQ try a dispatch again later: the job's row is held by a live lease,
 * or it went back to the queue after an attempt that may succeed later.
 */
class NotYet extends Error {}

/**
 * Async captures on BullMQ (docs/deployment.md, "Async captures"), when the nodes share Redis.
 * BullMQ carries "run job X" to one worker at a time, with its own lock, retries and stall
 * detection; the job's row in the database stays its truth, taken with the same lease as the
 * database queue, so a job succeeds at most once whatever BullMQ redelivers. A dispatch lost
 * to a crash or to Redis being away (the row says queued, or rendering under a dead lease) is
 * found by a sweep on every node and added again; BullMQ drops a duplicate of a job it holds.
 */
export function createBullMqJobQueue(options: {
  redisUrl: URL;
  /** REDIS_PREFIX: BullMQ's keys go under `<prefix>bull:`. */
  prefix: string;
  concurrency: number;
  leaseMs: number;
  /** Takes this job's row for this worker, or null when it cannot be taken now. */
  claim(id: string): Promise<CaptureJob | null>;
  /** The row's status (null: no such job). */
  status(id: string): Promise<JobStatus | null>;
  /** Runs a claimed job: 'requeued' when it went back to the queue for a later attempt. */
  run(job: CaptureJob): Promise<'done' | 'requeued'>;
  /** Ids of rows not finished and not leased, untouched for a while. */
  stranded(): Promise<string[]>;
  sweepIntervalMs: number;
  logger: Logger;
}): JobQueue & { close(): Promise<void> } {
  const connection = {
    url: options.redisUrl.toString(),
    // BullMQ's blocking connections must wait as long as they need.
    maxRetriesPerRequest: null,
    retryStrategy: (times: number) => Math.min(times * 100, 2_000),
  };
  const prefix = `${options.prefix}bull`;
  const queue = new Queue(QUEUE, { connection, prefix });
  queue.on('error', (err) => options.logger.warn({ err }, 'job queue: Redis error'));
  const retryDelay = Math.max(1_000, Math.floor(options.leaseMs / 2));
  const add = (id: string) =>
    queue.add(
      'capture',
      { id },
      {
        jobId: id,
        // Redeliveries while another worker's lease still holds the row, or after a
        // retryable failure (NotYet).
        attempts: 100,
        backoff: { type: 'fixed', delay: retryDelay },
        removeOnComplete: true,
        removeOnFail: true,
      },
    );

  const worker =
    options.concurrency > 0
      ? new Worker<{ id: string }>(
          QUEUE,
          async (bull) => {
            const job = await options.claim(bull.data.id);
            if (job === null) {
              const status = await options.status(bull.data.id);
              // Done already, or gone with its account: nothing to do.
              if (status !== 'queued' && status !== 'rendering') return;
              throw new NotYet(`job ${bull.data.id} is held by another worker, or not due yet`);
            }
            if ((await options.run(job)) === 'requeued') {
              throw new NotYet(`job ${bull.data.id} will be tried again`);
            }
          },
          {
            connection,
            prefix,
            concurrency: options.concurrency,
            // BullMQ's lock follows the row's lease: a dead worker's job is moved back to the
            // queue about when its row can be taken over.
            lockDuration: options.leaseMs,
            stalledInterval: options.leaseMs,
            maxStalledCount: 10,
          },
        )
      : null;
  worker?.on('error', (err) => options.logger.warn({ err }, 'job worker: Redis error'));

  const sweep = setInterval(() => {
    options
      .stranded()
      .then((ids) => Promise.all(ids.map(add)))
      .catch((err: unknown) => options.logger.warn({ err }, 'job queue: sweep failed'));
  }, options.sweepIntervalMs);
  sweep.unref();

  return {
    async dispatch(id) {
      await add(id);
    },
    async close() {
      clearInterval(sweep);
      await worker?.close();
      await queue.close();
    },
  };
}
