import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';
import * as m0001 from './0001-accounts-and-keys.ts';
import * as m0002 from './0002-usage-and-screenshots.ts';
import * as m0003 from './0003-billing.ts';
import * as m0004 from './0004-window-counters.ts';
import * as m0005 from './0005-screenshot-metadata.ts';
import * as m0006 from './0006-signing-secrets.ts';
import * as m0007 from './0007-async-captures.ts';
import * as m0008 from './0008-quota-holds.ts';
import * as m0009 from './0009-capture-warnings.ts';
import * as m0010 from './0010-capture-batches.ts';
import * as m0011 from './0011-screenshot-content.ts';
import * as m0012 from './0012-monitors.ts';
import * as m0013 from './0013-monitor-run-jobs.ts';
import * as m0014 from './0014-storage-destinations.ts';
import type { Dialect, MigrationFn } from './helpers.ts';

/**
 * The one migration history, in order. Each migration receives the dialect so a column
 * can take the clearest type on each database; names never change once released.
 */
const MIGRATIONS: ReadonlyArray<readonly [string, { up: MigrationFn }]> = [
  ['0001-accounts-and-keys', m0001],
  ['0002-usage-and-screenshots', m0002],
  ['0003-billing', m0003],
  ['0004-window-counters', m0004],
  ['0005-screenshot-metadata', m0005],
  ['0006-signing-secrets', m0006],
  ['0007-async-captures', m0007],
  ['0008-quota-holds', m0008],
  ['0009-capture-warnings', m0009],
  ['0010-capture-batches', m0010],
  ['0011-screenshot-content', m0011],
  ['0012-monitors', m0012],
  ['0013-monitor-run-jobs', m0013],
  ['0014-storage-destinations', m0014],
];

class StaticProvider implements MigrationProvider {
  private readonly dialect: Dialect;
  constructor(dialect: Dialect) {
    this.dialect = dialect;
  }
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const [name, migration] of MIGRATIONS) {
      out[name] = { up: (db) => migration.up(db, this.dialect) };
    }
    return out;
  }
}

export async function migrateToLatest(db: Kysely<unknown>, dialect: Dialect): Promise<string[]> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one: name the
  // connection's own, or a schema migrated earlier on the same server would hide them.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ schema: string | null }>`SELECT current_schema() AS schema`.execute(db))
          .rows[0]?.schema
      : undefined;
  const migrator = new Migrator({
    db,
    provider: new StaticProvider(dialect),
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest();
    if (!error) {
      return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
    }
    // Kysely's check for its own tables reads the catalog of every schema on the server; one
    // dropped meanwhile by another deployment (or a parallel test) fails that read, not us.
    // Nothing has run yet (each run is one transaction on PostgreSQL): look again.
    if (attempt < MIGRATE_ATTEMPTS && otherSchemaGone(error, schema)) continue;
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${String(error)}`, {
      cause: error,
    });
  }
}

/** Runs of the migrator when another schema vanishes under its catalog read. */
const MIGRATE_ATTEMPTS = 3;

/** PostgreSQL's invalid_schema_name (3F000) for a schema that is not the connection's own. */
export function otherSchemaGone(error: unknown, own: string | null | undefined): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e?.code !== '3F000' || typeof e.message !== 'string') return false;
  const named = /schema "([^"]+)" does not exist/.exec(e.message)?.[1];
  return named !== undefined && named !== own;
}
