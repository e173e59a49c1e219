import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { generateOpenApi } from '../scripts/write-openapi.ts';

test('the committed openapi.json matches the route schemas (run `npm run openapi`)', async () => {
  const committed = await readFile(path.resolve(import.meta.dirname, '..', 'openapi.json'), 'utf8');
  const generated = await generateOpenApi();
  assert.equal(committed, generated, 'openapi.json is stale: run `npm run openapi` and commit it');
  const doc = JSON.parse(generated) as { openapi: string; paths: Record<string, unknown> };
  assert.equal(doc.openapi, '3.1.0');
  for (const p of ['/v1/keys', '/v1/keys/{id}', '/v1/auth/login', '/v1/auth/signup']) {
    assert.ok(doc.paths[p], `${p} documented`);
  }
});
