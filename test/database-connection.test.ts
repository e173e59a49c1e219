/**
 * PostgreSQL going away under a transaction that holds a connection between two statements:
 * the process lives on (pg emits 'error' on a lent client whose connection ends while no
 * statement runs, and nobody listened: an uncaught 'error' event ended the node in a suite
 * run), the transaction's next statement is 503 `overloaded`, and the pool serves again
 * once the database is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { connectDatabase, type DatabaseHandle } from '../src/adapters/db/connect.ts';
import { isAppError } from '../src/domain/errors.ts';
import { sleep } from './helpers/fixtures.ts';
import { serviceSkip, TEST_DATABASE_URL } from './helpers/services.ts';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

describe('a PostgreSQL connection lost mid-transaction', async () => {
  const skip = await serviceSkip('postgres');
  if (skip) {
    it('skipped', { skip }, () => {});
    return;
  }
  let proxy: TcpProxy;
  let database: DatabaseHandle;

  // Statements only, no tables: the default schema, nothing written.
  before(async () => {
    const url = new URL(TEST_DATABASE_URL);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(proxy.port);
    database = connectDatabase({ url, dataDir: '/nonexistent' });
  });
  after(async () => {
    // Bounded: a pool whose lent client never came back would wait forever.
    await Promise.race([database?.close().catch(() => {}), sleep(5_000)]);
    await proxy?.stop();
  });

  it('fails that transaction with 503, keeps the process, and serves again', {
    timeout: 30_000,
  }, async () => {
    let cut: () => void = () => {};
    const cutDone = new Promise<void>((resolve) => {
      cut = resolve;
    });
    const transaction = database.db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      // The connection is lent to us and idle: it goes away now.
      cut();
      await proxy.stop();
      // Time for the client to see its connection end (and, unheard, crash the process).
      await sleep(300);
      await sql`SELECT 2`.execute(trx);
    });
    await cutDone;
    await assert.rejects(
      transaction,
      (err: unknown) => isAppError(err) && err.code === 'overloaded',
    );

    await proxy.start();
    const rows = await sql<{ n: number }>`SELECT 3 AS n`.execute(database.db);
    assert.equal(Number(rows.rows[0]?.n), 3);
  });
});
