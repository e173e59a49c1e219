import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';

/**
 * Adapts Node's built-in `node:sqlite` to the small better-sqlite3-shaped interface that
 * Kysely's SqliteDialect drives, so the embedded default needs no native build.
 */
export function openNodeSqlite(file: string): SqliteDatabase {
  const db = new DatabaseSync(file);
  // WAL lets the operator CLI read and write while the server runs; busy_timeout makes
  // the rare writer collision wait instead of failing.
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA busy_timeout = 5000');
  db.exec('PRAGMA foreign_keys = ON');
  // Statements are prepared once per SQL text; the adapter object is cached with them.
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      let cached = cache.get(sql);
      if (cached === undefined) {
        const statement: StatementSync = db.prepare(sql);
        cached = {
          reader: statement.columns().length > 0,
          all: (params) => statement.all(...bind(params)),
          run: (params) => statement.run(...bind(params)),
          iterate: (params) => statement.iterate(...bind(params)),
        };
        if (cache.size > 500) cache.clear();
        cache.set(sql, cached);
      }
      return cached;
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
