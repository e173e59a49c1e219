import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import { isDiskFull } from '../../lib/disk-full.ts';

/**
 * The embedded database's one connection, two ways in: `kysely`, the small
 * better-sqlite3-shaped interface Kysely's SqliteDialect drives, and `direct`, synchronous
 * prepared statements for the hot path (every authenticated request, every cache hit),
 * which skips Kysely's connection mutex and promise chain. Both share the connection and
 * its statement cache.
 */
export interface NodeSqlite {
  kysely: SqliteDatabase;
  direct: DirectSqlite;
  /** Closes the connection unless Kysely already did. */
  close(): void;
}

/**
 * Synchronous statements on the connection Kysely also uses. While Kysely has a transaction
 * open on it (it awaits between statements), a statement run here would join that
 * transaction: `available()` is false then, and callers go through Kysely, which waits for
 * the transaction to end.
 */
export interface DirectSqlite {
  available(): boolean;
  all<R>(sql: string, params: readonly unknown[]): R[];
  run(sql: string, params: readonly unknown[]): number;
  /** `fn` in one transaction (BEGIN IMMEDIATE ... COMMIT; ROLLBACK when it throws). */
  transaction<T>(fn: () => T): T;
  /**
   * Changes whenever a row of `users`, `api_keys` or `screenshots` may have changed since the
   * last call: a statement of this connection that names one of those tables and is no
   * SELECT (when run, only if it changed rows), or a commit by any other connection (another
   * process on the file, the operator CLI say: SQLite's `data_version`). What the store
   * remembers of those rows between requests is valid while this stays the same.
   */
  version(): number;
}

/**
 * The tables whose rows the store remembers between requests (key-store.ts,
 * screenshot-store.ts).
 */
const REMEMBERED_TABLES = /\b(users|api_keys|screenshots)\b/i;
const SELECT = /^\s*select\b/i;
const ROLLBACK = /^\s*rollback\s*$/i;

export function openNodeSqlite(file: string, onQuery: () => void = () => {}): NodeSqlite {
  const db = new DatabaseSync(file);
  // WAL lets the operator CLI read and write while the server runs; busy_timeout makes
  // the rare writer collision wait instead of failing.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  let generation = 0;
  let dataVersion: unknown = null;
  const readDataVersion = db.prepare('PRAGMA data_version');
  // Statements are prepared once per SQL text; the adapter object is cached with them.
  const cache = new Map<string, { statement: StatementSync; adapter: SqliteStatement }>();
  const prepared = (sql: string) => {
    let cached = cache.get(sql);
    if (cached === undefined) {
      const statement: StatementSync = db.prepare(sql);
      // Conservative: any statement that names a remembered table and is not a SELECT
      // counts as a write to it (a read through all() or iterate() is a RETURNING), and
      // the version moves once it has run, whether it succeeded or not.
      const writesRemembered = !SELECT.test(sql) && REMEMBERED_TABLES.test(sql);
      const rollback = ROLLBACK.test(sql);
      const wrote = () => {
        if (writesRemembered) generation++;
      };
      cached = {
        statement,
        adapter: {
          reader: statement.columns().length > 0,
          all: (params) => {
            try {
              return statement.all(...bind(params));
            } catch (err) {
              throw mapped(err);
            } finally {
              wrote();
            }
          },
          run: (params) => {
            // SQLite already rolled back a transaction whose write found the disk full
            // (SQLITE_FULL): Kysely's ROLLBACK after it must not replace that error.
            if (rollback && !db.isTransaction) return { changes: 0, lastInsertRowid: 0 };
            let changes = 1;
            try {
              const result = statement.run(...bind(params));
              changes = Number(result.changes);
              return result;
            } catch (err) {
              throw mapped(err);
            } finally {
              if (changes > 0) wrote();
            }
          },
          iterate: (params) =>
            writesRemembered
              ? wroteWhileIterating(statement.iterate(...bind(params)), wrote)
              : statement.iterate(...bind(params)),
        },
      };
      if (cache.size > 500) cache.clear();
      cache.set(sql, cached);
    }
    return cached;
  };
  const direct: DirectSqlite = {
    available: () => db.isOpen && !db.isTransaction,
    all<R>(sql: string, params: readonly unknown[]): R[] {
      onQuery();
      return prepared(sql).adapter.all(params) as R[];
    },
    run(sql, params) {
      onQuery();
      return Number(prepared(sql).adapter.run(params).changes);
    },
    version() {
      const { data_version } = readDataVersion.get() as { data_version: number };
      if (data_version !== dataVersion) {
        dataVersion = data_version;
        generation++;
      }
      return generation;
    },
    transaction(fn) {
      try {
        db.exec('BEGIN IMMEDIATE');
        const result = fn();
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw mapped(err);
      }
    },
  };
  return {
    kysely: {
      close: () => {
        if (db.isOpen) db.close();
      },
      prepare: (sql: string): SqliteStatement => prepared(sql).adapter,
    },
    direct,
    close: () => {
      if (db.isOpen) db.close();
    },
  };
}

/**
 * A write that found the disk full (SQLITE_FULL) is 503 `storage_error` with Retry-After
 * (docs/errors.md): nothing was written (SQLite rolls the statement or transaction back), and
 * the same write succeeds once space is freed.
 */
function mapped(err: unknown): unknown {
  if (err instanceof AppError || !isDiskFull(err)) return err;
  return new AppError('storage_error', 'the disk is full, retry shortly', {
    status: 503,
    headers: { 'Retry-After': '5' },
    cause: err,
  });
}

/**
 * A writing statement's rows, read lazily: it changes rows as they are pulled, so the version
 * moves after each pull and when the iteration ends, not only before it starts.
 */
function* wroteWhileIterating<T>(rows: Iterator<T>, wrote: () => void): Generator<T> {
  try {
    for (;;) {
      const next = rows.next();
      wrote();
      if (next.done) return;
      yield next.value;
    }
  } finally {
    rows.return?.();
    wrote();
  }
}

function bind(params: ReadonlyArray<unknown>): SQLInputValue[] {
  return params.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value === undefined) return null;
    return value as SQLInputValue;
  });
}
