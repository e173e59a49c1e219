import { type Kysely, sql } from 'kysely';
import type { Dialect } from './helpers.ts';

export async function up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
  // A monitor's run is carried by an async capture job (docs/api.md, "Monitors"): the job
  // names its run, and its worker ends the run (the comparison, the events) beside the job.
  // Such jobs do not count against the account's max_queued_jobs. No foreign key: runs and
  // jobs are pruned by their own sweeps, in either order.
  await db.schema.alterTable('capture_jobs').addColumn('monitor_run_id', 'text').execute();
  await db.schema
    .createIndex('capture_jobs_monitor_run_idx')
    .on('capture_jobs')
    .column('monitor_run_id')
    .execute();
  // The runs still running, which every scheduler tick reads for the ones whose job ended
  // without ending them: a partial index keeps that read off the table's history.
  await db.schema
    .createIndex('monitor_runs_running_idx')
    .on('monitor_runs')
    .column('at')
    .where(sql<boolean>`status = 'running'`)
    .execute();
}
