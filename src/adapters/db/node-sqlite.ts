import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

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
}

export function openNodeSqlite(file: string, onQuery: () => void = () => {}): NodeSqlite {
  const db = new DatabaseSync(file);
  // WAL lets the operator CLI read and write while the server runs; busy_timeout makes
  // the rare writer collision wait instead of failing.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  // Statements are prepared once per SQL text; the adapter object is cached with them.
  const cache = new Map<string, { statement: StatementSync; adapter: SqliteStatement }>();
  const prepared = (sql: string) => {
    let cached = cache.get(sql);
    if (cached === undefined) {
      const statement: StatementSync = db.prepare(sql);
      cached = {
        statement,
        adapter: {
          reader: statement.columns().length > 0,
          all: (params) => statement.all(...bind(params)),
          run: (params) => statement.run(...bind(params)),
          iterate: (params) => statement.iterate(...bind(params)),
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
      return prepared(sql).statement.all(...bind(params)) as R[];
    },
    run(sql, params) {
      onQuery();
      return Number(prepared(sql).statement.run(...bind(params)).changes);
    },
    transaction(fn) {
      db.exec('BEGIN IMMEDIATE');
      try {
        const result = fn();
        db.exec('COMMIT');
        return result;
      } catch (err) {
        if (db.isTransaction) db.exec('ROLLBACK');
        throw err;
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

function bind(params: ReadonlyArray<unknown>): SQLInputValue[] {
  return params.map((value) => {
    if (typeof value === 'boolean') return value ? 1 : 0;
    if (value === undefined) return null;
    return value as SQLInputValue;
  });
}
