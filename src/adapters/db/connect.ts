import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  Kysely,
  PostgresDialect,
  type PostgresPool,
  type PostgresPoolClient,
  SqliteDialect,
  sql,
} from 'kysely';
import pg from 'pg';
import { AppError } from '../../domain/errors.ts';
import { type DirectSqlite, openNodeSqlite } from './node-sqlite.ts';
import type { Database } from './schema.ts';

export type DialectName = 'sqlite' | 'postgres';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: DialectName;
  /** Throws when the database cannot answer (readiness probe). */
  ping(): Promise<void>;
  /** Queries run so far (a metric; tests use it to prove a path never touches the database). */
  queryCount(): number;
  /** SQLite only: synchronous statements for the hot path (node-sqlite.ts); null on PostgreSQL. */
  direct: DirectSqlite | null;
  /** PostgreSQL only: named prepared statements for the hot path; null on SQLite. */
  prepared: PreparedStatements | null;
  close(): Promise<void>;
}

/**
 * Hot-path statements prepared once per connection and executed by name afterwards
 * (PostgreSQL parses and plans them once instead of on every request). Outside
 * transactions only; same error mapping as every other query.
 */
export interface PreparedStatements {
  query<R>(name: string, text: string, params: readonly unknown[]): Promise<R[]>;
}

export interface DatabaseOptions {
  /** postgres:// URL; unset means the embedded SQLite file. */
  url: URL | undefined;
  /** Directory of the embedded SQLite file. */
  dataDir: string;
  /** PostgreSQL schema to use (tests give each run its own); default `public`. */
  schema?: string;
  poolSize?: number;
}

const INT8_OID = 20;

export function connectDatabase(options: DatabaseOptions): DatabaseHandle {
  let queries = 0;
  const log = () => {
    queries++;
  };
  const queryCount = () => queries;
  if (options.url === undefined) {
    mkdirSync(options.dataDir, { recursive: true });
    const file = path.join(options.dataDir, 'shotsmith.sqlite');
    const sqlite = openNodeSqlite(file, log);
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: async () => sqlite.kysely }),
      log,
    });
    return {
      db,
      dialect: 'sqlite',
      direct: sqlite.direct,
      prepared: null,
      ping: async () => {
        await sql`select 1`.execute(db);
      },
      queryCount,
      close: async () => {
        await db.destroy();
        sqlite.close();
      },
    };
  }

  const pool = new pg.Pool({
    connectionString: options.url.toString(),
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    // Bounded statements: a stuck query must not hold a request forever.
    statement_timeout: 15_000,
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
    types: {
      // BIGINT columns hold epoch milliseconds, well inside Number's exact range.
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that errors (server restart) must not crash the process.
  pool.on('error', () => {});
  // Nor a lent one whose connection ends while no statement of it runs (a transaction
  // between two statements): pg-pool takes its idle listener off while a client is lent,
  // and the client then emits 'error' with nobody listening. Its holder's next statement
  // fails, and the pool drops the client when it comes back.
  pool.on('connect', (client) => {
    client.on('error', () => {});
  });
  const fast = failingFast(pool);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: fast }), log });
  const prepared: PreparedStatements = {
    async query<R>(name: string, text: string, params: readonly unknown[]) {
      log();
      const client = await fast.connect();
      try {
        const config: pg.QueryConfig = { name, text, values: [...params] };
        const run = client.query as unknown as (c: pg.QueryConfig) => Promise<pg.QueryResult>;
        return (await run(config)).rows as R[];
      } finally {
        client.release();
      }
    },
  };
  return {
    db,
    dialect: 'postgres',
    direct: null,
    prepared,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    queryCount,
    close: () => db.destroy(),
  };
}

/** Error codes meaning "the database cannot answer now", not "this statement is wrong". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);
const UNAVAILABLE_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|connection error|Connection closed|not queryable/i;

export function isDatabaseUnavailable(err: unknown): boolean {
  if (err instanceof AppError) return false;
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  return (
    UNAVAILABLE_CODES.has(code) ||
    code.startsWith('08') || // connection_exception class
    (typeof e?.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message))
  );
}

const unavailable = (cause: unknown) =>
  new AppError('overloaded', 'database unavailable, retry shortly', {
    headers: { 'Retry-After': '5' },
    cause,
  });

/**
 * The pool as Kysely sees it, with a lost or unreachable database turned into 503
 * `overloaded` with Retry-After (docs/errors.md) instead of a bare 500; a client
 * whose connection broke is destroyed on release, and later requests open new
 * connections, so service resumes by itself when the database is back.
 */
function failingFast(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let broken = false;
    const query = (async (text: string, params: readonly unknown[]) => {
      try {
        return await client.query(text, params as unknown[]);
      } catch (err) {
        if (!isDatabaseUnavailable(err)) throw err;
        broken = true;
        throw unavailable(err);
      }
    }) as unknown as PostgresPoolClient['query'];
    return {
      query,
      release: () => {
        const destroy = broken;
        broken = false;
        client.release(destroy || undefined);
      },
    };
  };
  return {
    connect: async () => {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        throw isDatabaseUnavailable(err) ? unavailable(err) : err;
      }
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
