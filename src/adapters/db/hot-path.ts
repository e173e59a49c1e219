/**
 * The store's fast ways to the database, shared by its stores on the hot path (key-store.ts,
 * screenshot-store.ts, quota-store.ts): raw statements and the batching of one turn's reads.
 */
import DataLoader from 'dataloader';
import { CompiledQuery, type Kysely } from 'kysely';
import type { DialectName, PreparedStatements } from './connect.ts';
import type { DirectSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

/**
 * The hot path (every authenticated request, every cache hit) skips Kysely's query builder:
 * building and compiling took about a third of a cache-hit request. These few statements
 * are plain SQL valid on both dialects, `?` placeholders rewritten to `$n` for PostgreSQL.
 * On SQLite they run as synchronous prepared statements on the connection (`direct`),
 * except while a Kysely transaction holds it; on PostgreSQL, outside transactions, as named
 * prepared statements (`prepared`), parsed and planned once per connection.
 */
export function rawRunner(db: Kysely<Database>, dialect: DialectName, hot: HotPath) {
  const texts = new Map<string, { sql: string; name: string }>();
  return async <R>(text: string, params: unknown[]): Promise<R[]> => {
    if (hot.direct?.available()) return hot.direct.all<R>(text, params);
    let known = texts.get(text);
    if (known === undefined) {
      let n = 0;
      const sql = dialect === 'postgres' ? text.replace(/\?/g, () => `$${++n}`) : text;
      known = { sql, name: statementName(sql) };
      texts.set(text, known);
    }
    if (hot.prepared && !db.isTransaction)
      return hot.prepared.query<R>(known.name, known.sql, params);
    const result = await db.executeQuery<R>(CompiledQuery.raw(known.sql, params));
    return result.rows;
  };
}

/**
 * Hot-path reads of one event-loop turn go to PostgreSQL as one statement. Every round trip
 * costs a write and a read on a socket on each side, and on a busy node those, not the
 * queries, are most of a cache hit's time; the requests that arrive together (read in the
 * same poll phase) are looked up together. Nothing is remembered between turns (`cache:
 * false`): each request still reads the rows as they are when it asks. Returns null where
 * there is no network round trip to save (SQLite's statements are in-process) or inside a
 * transaction.
 */
export function turnBatcher<K, V>(
  hot: HotPath,
  load: (keys: readonly K[]) => Promise<V[]>,
): DataLoader<K, V> | null {
  if (!hot.prepared) return null;
  return new DataLoader<K, V>(load, {
    cache: false,
    batchScheduleFn: (run) => setImmediate(run),
    maxBatchSize: 200,
  });
}

/** The fast ways to the database for the hot path, when there are (connect.ts). */
export interface HotPath {
  direct?: DirectSqlite | null;
  prepared?: PreparedStatements | null;
}

/** One name per statement text, the same in every store of the process. */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `shotsmith_hot_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  return name;
}
