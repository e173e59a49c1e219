import type { Kysely, Selectable } from 'kysely';
import { imageToken } from '../../domain/monitors/monitor-rules.ts';
import type {
  Monitor,
  MonitorRun,
  MonitorRunEnd,
  MonitorRunRef,
  MonitorStatus,
  MonitorStore,
  RunStatus,
  ScreenshotRecord,
} from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { insertDelivery } from './job-store.ts';
import { lockedRows, lockRow, lockUser } from './row-locks.ts';
import type { Database, MonitorRunsTable, MonitorsTable } from './schema.ts';
import { toScreenshot } from './screenshot-store.ts';

const nullableNumber = (v: number | string | null): number | null =>
  v === null ? null : Number(v);

const toMonitor = (row: Selectable<MonitorsTable>): Monitor => ({
  seq: Number(row.seq),
  id: row.id,
  userId: Number(row.user_id),
  name: row.name,
  input: JSON.parse(row.input) as Monitor['input'],
  every: row.every,
  threshold: Number(row.threshold),
  ignoreSelectors: JSON.parse(row.ignore_selectors) as string[],
  webhookUrl: row.webhook_url,
  status: row.status as MonitorStatus,
  nextRunAt: Number(row.next_run_at),
  createdAt: Number(row.created_at),
  lastRunAt: nullableNumber(row.last_run_at),
  lastChangeAt: nullableNumber(row.last_change_at),
  baselineId: nullableNumber(row.baseline_id),
  failures: Number(row.failures),
  failedEventAt: nullableNumber(row.failed_event_at),
});

const toRun = (row: Selectable<MonitorRunsTable>): MonitorRun => ({
  seq: Number(row.seq),
  id: row.id,
  monitorId: row.monitor_id,
  at: Number(row.at),
  status: row.status as RunStatus,
  changed: row.changed === null ? null : Boolean(row.changed),
  changedFraction: nullableNumber(row.changed_fraction),
  imageUrl: row.image_url,
  diffUrl: row.diff_url,
  error: row.error,
  screenshotId: nullableNumber(row.screenshot_id),
});

/** Monitors and their runs (docs/api.md, "Monitors"). */
export function monitorStore(db: Kysely<Database>, dialect: DialectName): MonitorStore {
  const inTransaction = transactional(db);
  return {
    ...monitorRecords(db, dialect),
    ...monitorDeletion(db, dialect),
    ...scheduling(db, dialect),
    ...runImages(db),
    finishRun: (run, end, now) =>
      inTransaction((trx) => finishRun(trx, dialect, { run, end, now })),
    ...runRecords(db),
  };
}

/** Runs `fn` in the store's transaction, or in a new one. */
const transactional =
  (db: Kysely<Database>) =>
  <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> =>
    db.isTransaction ? fn(db) : db.transaction().execute(fn);

/** Monitors created, read, listed, changed. */
function monitorRecords(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<MonitorStore, 'createWithinLimit' | 'get' | 'list' | 'update'> {
  const inTransaction = transactional(db);
  return {
    createWithinLimit(monitor, max) {
      return inTransaction(async (trx) => {
        // Serialise the count per account, as async jobs do (two creates at once on
        // PostgreSQL would each see one fewer; SQLite writes one transaction at a time).
        await lockUser(trx, dialect, monitor.userId);
        const { n } = await trx
          .selectFrom('monitors')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', monitor.userId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= max) return 'limit_reached' as const;
        const row = await trx
          .insertInto('monitors')
          .values({
            id: monitor.id,
            user_id: monitor.userId,
            name: monitor.name,
            input: JSON.stringify(monitor.input),
            every: monitor.every,
            threshold: monitor.threshold,
            ignore_selectors: JSON.stringify(monitor.ignoreSelectors),
            webhook_url: monitor.webhookUrl,
            status: monitor.status,
            next_run_at: monitor.nextRunAt,
            created_at: monitor.createdAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return toMonitor(row);
      });
    },

    async get(userId, id) {
      const row = await db
        .selectFrom('monitors')
        .selectAll()
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row ? toMonitor(row) : null;
    },

    async list(userId, { limit, beforeSeq }) {
      let query = db.selectFrom('monitors').selectAll().where('user_id', '=', userId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit).execute();
      return rows.map(toMonitor);
    },

    async update(userId, id, patch) {
      const values: Partial<Record<keyof MonitorsTable, unknown>> = {};
      if (patch.name !== undefined) values.name = patch.name;
      if (patch.every !== undefined) values.every = patch.every;
      if (patch.threshold !== undefined) values.threshold = patch.threshold;
      if (patch.webhookUrl !== undefined) values.webhook_url = patch.webhookUrl;
      if (patch.status !== undefined) values.status = patch.status;
      if (patch.nextRunAt !== undefined) values.next_run_at = patch.nextRunAt;
      if (Object.keys(values).length === 0) return this.get(userId, id);
      const row = await db
        .updateTable('monitors')
        .set(values as never)
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .returningAll()
        .executeTakeFirst();
      return row ? toMonitor(row) : null;
    },
  };
}

/** A monitor deleted with its runs' images. */
function monitorDeletion(db: Kysely<Database>, dialect: DialectName): Pick<MonitorStore, 'delete'> {
  const inTransaction = transactional(db);
  return {
    delete(userId, id) {
      return inTransaction(async (trx) => {
        // The monitor's row first, locked as a run's end locks it (finishRun): a run ending
        // now has either written its image and diff to its run, read below, or it finds the
        // monitor gone and lets them go itself (releaseRunImages). SQLite has one writer.
        let current = trx
          .selectFrom('monitors')
          .selectAll()
          .where('id', '=', id)
          .where('user_id', '=', userId);
        current = lockedRows(current, dialect, 'wait');
        const row = await current.executeTakeFirst();
        if (row === undefined) return null;
        const runs = await trx
          .selectFrom('monitor_runs')
          .select(['screenshot_id', 'diff_url'])
          .where('monitor_id', '=', id)
          .execute();
        // Its runs go with it (ON DELETE CASCADE).
        await trx.deleteFrom('monitors').where('id', '=', id).execute();
        const ids = new Set<number>();
        const tokens = new Set<string>();
        if (row.baseline_id !== null) ids.add(Number(row.baseline_id));
        for (const run of runs) {
          if (run.screenshot_id !== null) ids.add(Number(run.screenshot_id));
          // A diff's record is named by its URL's token alone (it is no run's screenshot_id).
          const token = run.diff_url === null ? null : imageToken(run.diff_url);
          if (token !== null) tokens.add(token);
        }
        const images: ScreenshotRecord[] = [];
        // In chunks: a monitor's images over its plan's retention may be thousands.
        const chunks = [
          ...chunked([...ids]).map((part) => ['id', part] as const),
          ...chunked([...tokens]).map((part) => ['token', part] as const),
        ];
        for (const [column, part] of chunks) {
          const deleted = await trx
            .deleteFrom('screenshots')
            .where('user_id', '=', userId)
            .where(column, 'in', part)
            .returningAll()
            .execute();
          images.push(...deleted.map(toScreenshot));
        }
        return { monitor: toMonitor(row), images };
      });
    },
  };
}

/** The scheduler's reads and writes: due monitors claimed, runs in flight, quota pauses. */
function scheduling(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<MonitorStore, 'claimDue' | 'hasRunning' | 'resumeFromQuota' | 'getByRun'> {
  const inTransaction = transactional(db);
  return {
    claimDue(now, limit, next) {
      return inTransaction(async (trx) => {
        let due = trx
          .selectFrom('monitors')
          .selectAll()
          .where('status', 'in', ['active', 'paused_quota'])
          .where('next_run_at', '<=', now)
          .orderBy('next_run_at')
          .limit(limit);
        // Rows another node is claiming are skipped, not waited for: each node takes other
        // monitors. SQLite runs one write transaction at a time.
        due = lockedRows(due, dialect, 'skip');
        const claimed: Monitor[] = [];
        for (const row of await due.execute()) {
          const monitor = toMonitor(row);
          // Guarded by the due time read, too: a slot is claimed once even by a reader that
          // did not lock (SQLite's deferred transactions read before they write).
          const res = await trx
            .updateTable('monitors')
            .set({ next_run_at: next(monitor) })
            .where('id', '=', monitor.id)
            .where('next_run_at', '=', row.next_run_at)
            .where('status', '=', row.status)
            .executeTakeFirst();
          if (Number(res.numUpdatedRows) === 1) claimed.push(monitor);
        }
        return claimed;
      });
    },

    async hasRunning(monitorId) {
      const row = await db
        .selectFrom('monitor_runs')
        .select('id')
        .where('monitor_id', '=', monitorId)
        .where('status', '=', 'running')
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },

    async resumeFromQuota(monitorId) {
      await db
        .updateTable('monitors')
        .set({ status: 'active' })
        .where('id', '=', monitorId)
        .where('status', '=', 'paused_quota')
        .execute();
    },

    async getByRun(runId) {
      const row = await db
        .selectFrom('monitors')
        .selectAll('monitors')
        .innerJoin('monitor_runs', 'monitor_runs.monitor_id', 'monitors.id')
        .where('monitor_runs.id', '=', runId)
        .executeTakeFirst();
      return row ? toMonitor(row) : null;
    },
  };
}

/** Runs started, and the images of runs let go. */
function runImages(db: Kysely<Database>): Pick<MonitorStore, 'insertRun' | 'releaseRunImages'> {
  return {
    async insertRun(run) {
      const row = await db
        .insertInto('monitor_runs')
        .values({ id: run.id, monitor_id: run.monitorId, at: run.at, status: 'running' })
        .returningAll()
        .executeTakeFirstOrThrow();
      return toRun(row);
    },

    async releaseRunImages(userId, ids) {
      if (ids.length === 0) return [];
      const rows = await db
        .deleteFrom('screenshots')
        .where('user_id', '=', userId)
        .where('id', 'in', [...ids])
        .where(({ exists, not, selectFrom }) =>
          not(
            exists(
              selectFrom('monitor_runs')
                .innerJoin('monitors', 'monitors.id', 'monitor_runs.monitor_id')
                .select('monitor_runs.id')
                .where('monitors.user_id', '=', userId)
                .whereRef('monitor_runs.screenshot_id', '=', 'screenshots.id'),
            ),
          ),
        )
        .where(({ exists, not, selectFrom }) =>
          not(
            exists(
              selectFrom('monitors')
                .select('monitors.id')
                .where('monitors.user_id', '=', userId)
                .whereRef('monitors.baseline_id', '=', 'screenshots.id'),
            ),
          ),
        )
        .returningAll()
        .execute();
      return rows.map(toScreenshot);
    },
  };
}

/** Runs read, listed, pruned, and failed when their job is gone. */
function runRecords(
  db: Kysely<Database>,
): Pick<MonitorStore, 'getRun' | 'listRuns' | 'pruneRuns' | 'failStale'> {
  return {
    async getRun(monitorId, runId) {
      const row = await db
        .selectFrom('monitor_runs')
        .selectAll()
        .where('id', '=', runId)
        .where('monitor_id', '=', monitorId)
        .executeTakeFirst();
      return row ? toRun(row) : null;
    },

    async listRuns(monitorId, { limit, beforeSeq }) {
      let query = db.selectFrom('monitor_runs').selectAll().where('monitor_id', '=', monitorId);
      if (beforeSeq !== null) query = query.where('seq', '<', beforeSeq);
      const rows = await query.orderBy('seq', 'desc').limit(limit).execute();
      return rows.map(toRun);
    },

    async pruneRuns(before) {
      const res = await db
        .deleteFrom('monitor_runs')
        .where('at', '<', before)
        .where('status', '!=', 'running')
        .where((eb) =>
          eb.or([
            eb('screenshot_id', 'is', null),
            eb.not(
              eb.exists(
                eb
                  .selectFrom('screenshots')
                  .select('screenshots.id')
                  .whereRef('screenshots.id', '=', 'monitor_runs.screenshot_id'),
              ),
            ),
          ]),
        )
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    async failStale(before, error) {
      const res = await db
        .updateTable('monitor_runs')
        .set({ status: 'failed', error })
        .where('status', '=', 'running')
        .where('at', '<', before)
        .where(({ exists, not, selectFrom }) =>
          not(
            exists(
              selectFrom('capture_jobs')
                .select('capture_jobs.id')
                .whereRef('capture_jobs.monitor_run_id', '=', 'monitor_runs.id')
                // Open, or ended since `before`: its worker may be ending the run right now.
                .where((eb) =>
                  eb.or([
                    eb('capture_jobs.status', 'in', ['queued', 'rendering']),
                    eb('capture_jobs.finished_at', '>=', before),
                  ]),
                ),
            ),
          ),
        )
        .executeTakeFirst();
      return Number(res.numUpdatedRows);
    },
  };
}

/** Ends a running run and writes what follows on the monitor (MonitorStore.finishRun). */
async function finishRun(
  trx: Kysely<Database>,
  dialect: DialectName,
  ending: { run: MonitorRunRef; end: MonitorRunEnd; now: number },
): Promise<boolean> {
  const { run, end, now } = ending;
  const { monitorId, runId } = run;
  // The monitor's row first, as a DELETE of the monitor locks it before its runs: the
  // two never wait for each other in opposite orders (PostgreSQL; SQLite has one writer).
  await lockRow(trx, dialect, { table: 'monitors', id: monitorId });
  const res = await trx
    .updateTable('monitor_runs')
    .set({
      status: end.run.status,
      changed: end.run.changed === null ? null : end.run.changed,
      changed_fraction: end.run.changedFraction,
      image_url: end.run.imageUrl,
      diff_url: end.run.diffUrl,
      error: end.run.error,
      screenshot_id: end.run.screenshotId,
    } as never)
    .where('id', '=', runId)
    .where('monitor_id', '=', monitorId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) return false;
  if (end.newBaseline !== undefined) await moveBaseline(trx, dialect, monitorId, end.newBaseline);
  const values = monitorValues(end.monitor);
  if (Object.keys(values).length > 0) {
    await trx
      .updateTable('monitors')
      .set(values as never)
      .where('id', '=', monitorId)
      .execute();
  }
  for (const delivery of end.deliveries) await insertDelivery(trx, delivery, now);
  return true;
}

/**
 * The monitor's baseline becomes `next`, kept as long as it is one; the one before goes back
 * to its plan's retention. The monitor's row locked (PostgreSQL; SQLite writes one transaction
 * at a time): of runs ending together, each lets go of the baseline the one before it set.
 */
async function moveBaseline(
  trx: Kysely<Database>,
  dialect: DialectName,
  monitorId: string,
  next: NonNullable<MonitorRunEnd['newBaseline']>,
): Promise<void> {
  let current = trx.selectFrom('monitors').select('baseline_id').where('id', '=', monitorId);
  current = lockedRows(current, dialect, 'wait');
  const row = await current.executeTakeFirst();
  const old = row?.baseline_id === null || row === undefined ? null : Number(row.baseline_id);
  if (old !== null && old !== next.id) {
    await trx
      .updateTable('screenshots')
      .set((eb) => ({ expires_at: eb('created_at', '+', next.retentionMs) }))
      .where('id', '=', old)
      .execute();
  }
  await trx
    .updateTable('screenshots')
    .set({ expires_at: next.expiresAt })
    .where('id', '=', next.id)
    .execute();
}

/** The monitor's columns a run's end sets (those it names). */
function monitorValues(m: MonitorRunEnd['monitor']): Partial<Record<keyof MonitorsTable, unknown>> {
  const values: Partial<Record<keyof MonitorsTable, unknown>> = {};
  if (m.lastRunAt !== undefined) values.last_run_at = m.lastRunAt;
  if (m.lastChangeAt !== undefined) values.last_change_at = m.lastChangeAt;
  if (m.baselineId !== undefined) values.baseline_id = m.baselineId;
  if (m.failures !== undefined) values.failures = m.failures;
  if (m.failedEventAt !== undefined) values.failed_event_at = m.failedEventAt;
  if (m.status !== undefined) values.status = m.status;
  return values;
}

/** Values per `IN (...)` list: well under SQLite's 32,766 bound parameters. */
const CHUNK = 500;

function chunked<T>(values: T[]): T[][] {
  const parts: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) parts.push(values.slice(i, i + CHUNK));
  return parts;
}
