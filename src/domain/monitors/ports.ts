import type { CaptureContext } from '../captures/ports.ts';
import type { JobQueue } from '../jobs/ports.ts';

/**
 * What a monitor run needs beyond a capture's context (the port; adapters/compare implements
 * it with sharp and pixelmatch).
 */
export interface ImageComparison {
  /** Share of the pixels that differ, 0 to 1; 1 when the two images differ in size. */
  changedFraction: number;
  /**
   * A PNG of the changes (changed pixels red over a faded greyscale copy of the new image),
   * made when the changed fraction reaches the threshold; null below it, and when the sizes
   * differ (no pixel lines up with another).
   */
  diff: Buffer | null;
}

export interface ImageComparer {
  /**
   * Compares two encoded images (PNG, JPEG or WebP), off the event loop. The buffers are
   * handed over: they may be detached (empty) when it returns, so do not read them after.
   */
  compare(before: Buffer, after: Buffer, options: { threshold: number }): Promise<ImageComparison>;
}

/** What ending a run needs: the capture's context and the comparer. */
export interface RunEndContext extends CaptureContext {
  comparer: ImageComparer;
}

/** What starting one needs besides: the job queue its capture is carried on. */
export interface MonitorContext extends RunEndContext {
  jobs: JobQueue;
}
