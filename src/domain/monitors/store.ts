/**
 * The monitors' port on the database (docs/api.md, "Monitors"): monitors, their runs and how a
 * run ends, beside the monitors' domain. The other ports sit beside their domains too;
 * ../store.ts composes them into the Store and re-exports their types.
 */
import type { ScreenshotRecord } from '../captures/store.ts';
import type { NewDelivery } from '../jobs/store.ts';

export interface MonitorInput {
  url?: string;
  html?: string;
  /**
   * The html document's size in UTF-8 bytes and its SHA-256 (hex), worked out once when the
   * monitor is made: answers show these instead of the document. Absent for a URL monitor,
   * and for one made before they were kept (worked out when answered).
   */
  htmlDigest?: { bytes: number; sha256: string };
  options: Record<string, unknown>;
}

export type MonitorStatus = 'active' | 'paused' | 'paused_quota';

/** A monitor (docs/api.md, "Monitors"). */
export interface Monitor {
  /** Orders the listing (its cursor). */
  seq: number;
  id: string;
  userId: number;
  name: string | null;
  /** What each run captures: the target and the capture options as given. */
  input: MonitorInput;
  every: string;
  threshold: number;
  ignoreSelectors: string[];
  webhookUrl: string | null;
  status: MonitorStatus;
  nextRunAt: number;
  createdAt: number;
  lastRunAt: number | null;
  lastChangeAt: number | null;
  /** The screenshot record of the last successful run, the next run's baseline. */
  baselineId: number | null;
  /** Runs failed in a row. */
  failures: number;
  /** When monitor.failed was last sent (at most once a day while failing). */
  failedEventAt: number | null;
}

export type NewMonitor = Omit<
  Monitor,
  'seq' | 'lastRunAt' | 'lastChangeAt' | 'baselineId' | 'failures' | 'failedEventAt'
>;

export type RunStatus = 'running' | 'succeeded' | 'failed';

export interface MonitorRun {
  seq: number;
  id: string;
  monitorId: string;
  at: number;
  status: RunStatus;
  changed: boolean | null;
  changedFraction: number | null;
  imageUrl: string | null;
  diffUrl: string | null;
  error: string | null;
  screenshotId: number | null;
}

/** A run, by its monitor and its id. */
export interface MonitorRunRef {
  monitorId: string;
  runId: string;
}

/** What one run's end writes on its monitor, in the run's own transaction. */
export interface MonitorRunEnd {
  run: Pick<
    MonitorRun,
    'status' | 'changed' | 'changedFraction' | 'imageUrl' | 'diffUrl' | 'error' | 'screenshotId'
  >;
  monitor: Partial<
    Pick<
      Monitor,
      'lastRunAt' | 'lastChangeAt' | 'baselineId' | 'failures' | 'failedEventAt' | 'status'
    >
  >;
  /**
   * The run's record becomes the baseline, kept (`expiresAt`) while the monitor exists; the
   * baseline it replaces, read in the same transaction (so runs ending together cannot leave
   * one kept for ever), expires `retentionMs` after it was made, as its plan says.
   */
  newBaseline?: { id: number; expiresAt: number; retentionMs: number };
  deliveries: NewDelivery[];
}

export interface MonitorStore {
  /** Inserts the monitor unless the account already has `max` of them. */
  createWithinLimit(monitor: NewMonitor, max: number): Promise<Monitor | 'limit_reached'>;
  get(userId: number, id: string): Promise<Monitor | null>;
  /** Newest first, strictly before the cursor's seq. */
  list(userId: number, options: { limit: number; beforeSeq: number | null }): Promise<Monitor[]>;
  update(
    userId: number,
    id: string,
    patch: Partial<
      Pick<Monitor, 'name' | 'every' | 'threshold' | 'webhookUrl' | 'status' | 'nextRunAt'>
    >,
  ): Promise<Monitor | null>;
  /**
   * Deletes the monitor, its runs and the records of its images (each run's image, each
   * diff, the baseline) in one transaction, its row locked first so that a run ending at the
   * same moment has either written its images to its run, deleted here, or finds the monitor
   * gone. Returns the monitor and the image records, whose stored files the caller deletes;
   * null when it is not the account's.
   */
  delete(
    userId: number,
    id: string,
  ): Promise<{ monitor: Monitor; images: ScreenshotRecord[] } | null>;
  /**
   * Deletes the records among `ids` (a run's image and diff) that no run of the account's
   * monitors shows and no monitor keeps as its baseline: the images of a run that ended
   * after its monitor was deleted. Returns the deleted records, whose files the caller deletes.
   */
  releaseRunImages(userId: number, ids: readonly number[]): Promise<ScreenshotRecord[]>;
  /**
   * Claims up to `limit` monitors due at `now`, active or paused on quota (a slot of those
   * looks whether the month has room again): each one's `next_run_at` is moved to
   * `next(monitor)` in one transaction with its rows locked (FOR UPDATE SKIP LOCKED on
   * PostgreSQL, so nodes ticking together each take other monitors; SQLite has one writer),
   * so of nodes racing for a slot exactly one gets it.
   */
  claimDue(now: number, limit: number, next: (m: Monitor) => number): Promise<Monitor[]>;
  /** The monitor a run belongs to (null: deleted with its runs). */
  getByRun(runId: string): Promise<Monitor | null>;
  /** Whether the monitor has a run queued or rendering (`running`). */
  hasRunning(monitorId: string): Promise<boolean>;
  /** Back to `active` from `paused_quota` only (a pause the account asked for stays). */
  resumeFromQuota(monitorId: string): Promise<void>;
  insertRun(run: Pick<MonitorRun, 'id' | 'monitorId' | 'at'>): Promise<MonitorRun>;
  /** Ends a running run and writes what follows on the monitor; false when it is gone. */
  finishRun(run: MonitorRunRef, end: MonitorRunEnd, now: number): Promise<boolean>;
  getRun(monitorId: string, runId: string): Promise<MonitorRun | null>;
  /** Newest first, strictly before the cursor's seq. */
  listRuns(
    monitorId: string,
    options: { limit: number; beforeSeq: number | null },
  ): Promise<MonitorRun[]>;
  /**
   * Deletes ended runs started before `before` whose image is gone (swept with its plan's
   * retention) or that had none (failed runs); a baseline's run stays with its image.
   */
  pruneRuns(before: number): Promise<number>;
  /**
   * Ends runs still `running` that started before `before` and have no job queued or
   * rendering, nor one that ended since `before`, as failed: their job ended without ending
   * them (its node stopped between the two), or was never written. How many.
   */
  failStale(before: number, error: string): Promise<number>;
}
