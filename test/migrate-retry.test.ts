/**
 * The migrator looks again when another schema vanishes under Kysely's catalog read (a
 * parallel test or another deployment dropping its schema; seen once in a suite run as
 * `schema "c_..." does not exist` from that read). The errors are PostgreSQL's own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { otherSchemaGone } from '../migrations/index.ts';
import { withPg } from './helpers/app.ts';
import { serviceSkip } from './helpers/services.ts';

async function pgError(query: string): Promise<unknown> {
  return withPg((client) => client.query(query)).then(
    () => assert.fail(`${query} did not fail`),
    (err: unknown) => err,
  );
}

describe("a schema dropped during the migrator's catalog read", async () => {
  const skip = await serviceSkip('postgres');
  it('is retried when it is another schema, never when it is ours', { skip }, async () => {
    const gone = await pgError("SELECT has_schema_privilege('shotsmith_gone_x', 'USAGE')");
    assert.equal((gone as { code?: string }).code, '3F000');
    assert.equal(otherSchemaGone(gone, 'c_mine'), true);
    assert.equal(otherSchemaGone(gone, 'shotsmith_gone_x'), false);
  });

  it('is not retried for any other error', { skip }, async () => {
    const syntax = await pgError('SELEC 1');
    assert.equal(otherSchemaGone(syntax, 'c_mine'), false);
    const table = await pgError('SELECT * FROM shotsmith_no_such_table');
    assert.equal(otherSchemaGone(table, 'c_mine'), false);
    assert.equal(otherSchemaGone(new Error('boom'), 'c_mine'), false);
  });
});
