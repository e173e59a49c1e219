/**
 * The domain's `Store` (domain/store.ts) over Kysely, on SQLite or PostgreSQL: one store per
 * file beside this one, composed here, and the transaction that runs them all in one.
 */

import type { Kysely } from 'kysely';
import type { Store } from '../../domain/store.ts';
import { batchStore } from './batch-store.ts';
import { billingStore } from './billing-store.ts';
import type { DialectName } from './connect.ts';
import { destinationStore } from './destination-store.ts';
import type { HotPath } from './hot-path.ts';
import { jobStore } from './job-store.ts';
import { keyStore } from './key-store.ts';
import { monitorStore } from './monitor-store.ts';
import { quotaStore } from './quota-store.ts';
import type { Database } from './schema.ts';
import { screenshotStore } from './screenshot-store.ts';
import { sessionStore } from './session-store.ts';
import { userStore } from './user-store.ts';
import { webhookStore } from './webhook-store.ts';

/**
 * The store over Kysely. `hot`: the faster ways in for the hot path (connect.ts), none
 * inside a transaction.
 */
export function createKyselyStore(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath = {},
): Store {
  const store: Store = {
    users: userStore(db),
    sessions: sessionStore(db),
    keys: keyStore(db, dialect, hot),
    quota: quotaStore(db, dialect, hot),
    screenshots: screenshotStore(db, dialect, hot),
    billing: billingStore(db, dialect),
    jobs: jobStore(db, dialect),
    batches: batchStore(db, dialect),
    webhooks: webhookStore(db, dialect),
    monitors: monitorStore(db, dialect),
    destinations: destinationStore(db, dialect),
    // Inside a transaction the store already runs in it (Kysely does not nest them).
    transaction: (fn) =>
      db.isTransaction
        ? fn(store)
        : db.transaction().execute((trx) => fn(createKyselyStore(trx, dialect))),
  };
  return store;
}
