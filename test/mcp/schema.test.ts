/**
 * The MCP tools' input schemas are generated from openapi.json (scripts/write-mcp-schema.ts):
 * the committed file must be what the committed document gives, so a capture option added to
 * the service, or a description changed, reaches the MCP tools in the same commit.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { it } from 'node:test';
import {
  CAPTURE_OPTIONS_SCHEMA,
  MONITOR_REQUEST_SCHEMA,
} from '../../packages/mcp/src/tool-schemas.ts';
import {
  generateMcpSchemas,
  MCP_SCHEMA_FILE,
  mcpToolSchemas,
} from '../../scripts/write-mcp-schema.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

it('the committed tool schemas are what openapi.json gives', async () => {
  const openapi = await readFile(path.join(ROOT, 'openapi.json'), 'utf8');
  assert.equal(
    await readFile(MCP_SCHEMA_FILE, 'utf8'),
    generateMcpSchemas(openapi),
    'packages/mcp/src/tool-schemas.ts is stale: run npm run openapi:types',
  );
  const { capture, monitor } = mcpToolSchemas(openapi);
  assert.deepEqual(CAPTURE_OPTIONS_SCHEMA, capture);
  assert.deepEqual(MONITOR_REQUEST_SCHEMA, monitor);
  for (const name of ['async', 'response_type', 'webhook_url']) {
    assert.equal(name in CAPTURE_OPTIONS_SCHEMA.properties, false, name);
  }
  assert.ok('selector' in CAPTURE_OPTIONS_SCHEMA.properties);
});

it('a changed option description makes the schema stale', async () => {
  const doc = JSON.parse(await readFile(path.join(ROOT, 'openapi.json'), 'utf8'));
  doc.paths['/v1/screenshots'].post.requestBody.content[
    'application/json'
  ].schema.properties.width.description = 'changed';
  assert.notEqual(generateMcpSchemas(JSON.stringify(doc)), await readFile(MCP_SCHEMA_FILE, 'utf8'));
});
