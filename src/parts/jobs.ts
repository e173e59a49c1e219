/**
 * Async captures (docs/deployment.md, "Async captures"): the job queue (BullMQ with Redis,
 * else the database's own) and this node's workers, ASYNC_WORKERS of them. Shutdown's first
 * step: no more jobs taken, and a job the renderer cuts off from then on goes back to the
 * queue at once; jobs rendering go on, and the close waits for them.
 */
import { createDbJobQueue } from '../adapters/jobs/db-queue.ts';
import type { Config } from '../config/config.ts';
import { BOUNDS } from '../domain/bounds.ts';
import type { CaptureContext } from '../domain/captures/ports.ts';
import type { JobContext, JobQueue, JobRunContext, MonitorRunEnds } from '../domain/jobs/ports.ts';
import { runJob } from '../domain/jobs/run-job.ts';
import type { CaptureJob } from '../domain/store.ts';
import type { Logger } from '../lib/logger.ts';
import type { Part } from './part.ts';

type ClosableQueue = JobQueue & { close(): Promise<void> };

interface QueueOptions {
  config: Pick<Config, 'jobs' | 'redisUrl' | 'redisPrefix'>;
  capture: CaptureContext;
  /** This node's name on the leases it takes. */
  owner: string;
  run: (job: CaptureJob) => Promise<'done' | 'requeued'>;
  logger: Logger;
}

export async function jobsPart(options: {
  config: Pick<Config, 'jobs' | 'redisUrl' | 'redisPrefix'>;
  capture: CaptureContext;
  /** How a monitor's run ends (monitors.ts), built before this part. */
  runEnds: MonitorRunEnds;
  owner: string;
  /** Told when a job has ended: it may have a webhook to send now rather than at a tick. */
  jobEnded: () => void;
  logger: Logger;
}): Promise<Part<JobContext>> {
  const { owner, jobEnded } = options;
  const stopping = new AbortController();
  const leaseMs = options.config.jobs.leaseMs;
  const running: JobRunContext = { ...options.capture, monitorRuns: options.runEnds };
  const run = (job: CaptureJob) =>
    runJob(running, job, { owner, leaseMs, stopping: stopping.signal }).finally(jobEnded);
  const queue = await createQueue({ ...options, run });
  return {
    gives: { ...running, jobs: queue },
    stopTaking: async () => {
      stopping.abort();
      // No more jobs taken; those rendering go on (the close waits for them).
      void queue.close().catch(() => {});
    },
    close: () => queue.close(),
  };
}

async function createQueue(options: QueueOptions): Promise<ClosableQueue> {
  const { config, owner, run, logger } = options;
  const { store, clock } = options.capture;
  const { workers, leaseMs } = config.jobs;
  if (!config.redisUrl) {
    return createDbJobQueue({
      concurrency: workers,
      pollMs: BOUNDS.jobs.pollIntervalMs,
      claim: () => store.jobs.claim({ owner, now: clock(), leaseMs }),
      run,
      release: (job) => store.jobs.release({ id: job.id, owner }, { now: clock(), ran: false }),
      logger,
    });
  }
  // BullMQ (and ioredis) are loaded only with Redis configured.
  const { createBullMqJobQueue } = await import('../adapters/jobs/bullmq-queue.ts');
  return createBullMqJobQueue({
    redisUrl: config.redisUrl,
    prefix: config.redisPrefix,
    concurrency: workers,
    leaseMs,
    claim: (id) => store.jobs.claim({ owner, now: clock(), leaseMs, id }),
    status: (id) => store.jobs.status(id),
    run,
    stranded: () => store.jobs.stranded(clock(), clock() - leaseMs, 100),
    sweepIntervalMs: BOUNDS.jobs.strandedSweepMs,
    logger,
  });
}
