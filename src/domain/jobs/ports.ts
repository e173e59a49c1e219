import type { CaptureContext } from '../captures/ports.ts';
import type { CaptureJob, ScreenshotRecord } from '../store.ts';

/**
 * Carries "run job X" to a worker (docs/deployment.md, "Async captures"): BullMQ on Redis, or
 * the database itself. The job's row is the truth either way; a dispatch lost to a crash is
 * found again by the stranded-job sweep.
 */
export interface JobQueue {
  dispatch(id: string): Promise<void>;
}

/** POSTs a webhook body through the egress rules; throws when it could not be sent at all. */
export interface WebhookSender {
  send(request: {
    url: string;
    headers: Record<string, string>;
    body: string;
    timeoutMs: number;
    /** Ends the request early (the node is stopping). */
    signal?: AbortSignal;
  }): Promise<{ status: number; body: string }>;
}

/**
 * How a monitor's run ends when the job carrying it ends (domain/monitors/run-monitor.ts):
 * the worker tells it before it writes the job's own end, while it holds the job.
 */
export interface MonitorRunEnds {
  /**
   * The run's monitor's id, the scope its capture is cached under (a run's images are its
   * monitor's alone, deleted with it); null when the monitor was deleted since the run was
   * queued: nothing to render.
   */
  wanted(job: CaptureJob): Promise<string | null>;
  succeeded(job: CaptureJob, record: ScreenshotRecord): Promise<void>;
  failed(job: CaptureJob, error: string): Promise<void>;
}

/** What a worker runs a job with: the capture's context, and how a monitor's run ends. */
export interface JobRunContext extends CaptureContext {
  monitorRuns: MonitorRunEnds;
}

/** What queueing a job needs besides: the queue that carries it to a worker. */
export interface JobContext extends JobRunContext {
  jobs: JobQueue;
}
