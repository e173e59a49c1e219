import type { CaptureContext } from '../captures/ports.ts';

/**
 * What a monitor run needs beyond a capture's context (the port; adapters/compare implements
 * it with sharp and pixelmatch).
 */
export interface ImageComparison {
  /** Share of the pixels that differ, 0 to 1; 1 when the two images differ in size. */
  changedFraction: number;
  /**
   * A PNG of the changes (changed pixels red over a faded greyscale copy of the new image),
   * null when the sizes differ (no pixel lines up with another).
   */
  diff: Buffer | null;
}

export interface ImageComparer {
  /** Compares two encoded images (PNG, JPEG or WebP). */
  compare(before: Buffer, after: Buffer): Promise<ImageComparison>;
}

export interface MonitorContext extends CaptureContext {
  comparer: ImageComparer;
}
