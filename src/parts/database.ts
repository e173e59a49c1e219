/**
 * The database part: SQLite under DATA_DIR, or PostgreSQL when DATABASE_URL is set,
 * migrated to the latest schema, with the store over it and the server secret it keeps.
 */
import { migrateToLatest } from '../../migrations/index.ts';
import { connectDatabase, type DatabaseHandle } from '../adapters/db/connect.ts';
import { createKyselyStore } from '../adapters/db/kysely-store.ts';
import { loadServerSecret } from '../adapters/db/server-secret.ts';
import type { Config } from '../config/config.ts';
import type { Store } from '../domain/store.ts';
import { createSecretDeriver, type SecretDeriver } from '../lib/server-secret.ts';
import type { Clock } from '../lib/time.ts';
import { closeOnFailure, type Part } from './part.ts';

export interface DatabaseGives {
  database: DatabaseHandle;
  store: Store;
  /** Secrets derived from SERVER_SECRET, or from the one kept in the database. */
  secrets: SecretDeriver;
}

export async function databasePart(options: {
  config: Config['data'];
  /** PostgreSQL schema (the config's, or the one a test run was given). */
  schema: string | undefined;
  /** SERVER_SECRET, if set. */
  serverSecret: string | undefined;
  clock: Clock;
}): Promise<Part<DatabaseGives>> {
  const { config, schema } = options;
  const database = connectDatabase({
    url: config.databaseUrl,
    dataDir: config.dir,
    ...(schema ? { schema } : {}),
  });
  const close = () => database.close();
  return closeOnFailure(close, async () => {
    await migrateToLatest(database.db as never, database.dialect);
    // With NODE_ENV=production loadConfig has refused a boot without SERVER_SECRET.
    const serverSecret = await loadServerSecret(database.db, options.serverSecret, options.clock());
    const store = createKyselyStore(database.db, database.dialect, {
      direct: database.direct,
      prepared: database.prepared,
    });
    return {
      gives: { database, store, secrets: createSecretDeriver(serverSecret.secret) },
      ready: { name: 'database', check: () => database.ping() },
      close,
    };
  });
}
