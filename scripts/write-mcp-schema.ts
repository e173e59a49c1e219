/**
 * Writes the MCP server's tool input schemas (packages/mcp/src/tool-schemas.ts) from the
 * committed openapi.json: `capture_screenshot` takes the body of POST /v1/screenshots less the
 * fields the server sets itself (`async`, `response_type`, `webhook_url`), `create_monitor`
 * the body of POST /v1/monitors, each with the service's own descriptions. `npm run
 * openapi:types` runs it; with `--check` it writes nothing and fails when the file is stale
 * (`npm run typecheck` runs it that way, and test/mcp/schema.test.ts holds the same rule).
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
export const MCP_SCHEMA_FILE = path.join(root, 'packages', 'mcp', 'src', 'tool-schemas.ts');

/** Capture fields the MCP server never passes on: it always asks for the JSON answer, now. */
export const NOT_TOOL_OPTIONS = ['async', 'response_type', 'webhook_url'] as const;

interface JsonSchema {
  type?: string;
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

type Doc = {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
  >;
};

function body(doc: Doc, route: string): JsonSchema {
  const schema = doc.paths[route]?.post?.requestBody?.content['application/json']?.schema;
  if (!schema?.properties) throw new Error(`openapi.json has no JSON body for POST ${route}`);
  return schema;
}

/** The two schemas, as the tools declare them. */
export function mcpToolSchemas(openapiJson: string): {
  capture: JsonSchema;
  monitor: JsonSchema;
} {
  const doc = JSON.parse(openapiJson) as Doc;
  const capture = structuredClone(body(doc, '/v1/screenshots'));
  for (const name of NOT_TOOL_OPTIONS) delete capture.properties?.[name];
  const monitor = structuredClone(body(doc, '/v1/monitors'));
  return { capture, monitor };
}

export function generateMcpSchemas(openapiJson: string): string {
  const { capture, monitor } = mcpToolSchemas(openapiJson);
  return `/**
 * Generated from openapi.json (\`npm run openapi:types\`, scripts/write-mcp-schema.ts): do not
 * edit. The tools' input JSON Schemas, with the service's own descriptions.
 */

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  [keyword: string]: unknown;
}

/** POST /v1/screenshots's body less ${NOT_TOOL_OPTIONS.join(', ')}. */
export const CAPTURE_OPTIONS_SCHEMA: ObjectSchema = ${JSON.stringify(capture, null, 2)};

/** POST /v1/monitors's body. */
export const MONITOR_REQUEST_SCHEMA: ObjectSchema = ${JSON.stringify(monitor, null, 2)};
`;
}

if (import.meta.main) {
  const want = generateMcpSchemas(await readFile(path.join(root, 'openapi.json'), 'utf8'));
  if (process.argv.includes('--check')) {
    const have = await readFile(MCP_SCHEMA_FILE, 'utf8').catch(() => '');
    if (have !== want) {
      console.error(`${path.relative(root, MCP_SCHEMA_FILE)} is stale: run npm run openapi:types`);
      process.exit(1);
    }
  } else {
    await writeFile(MCP_SCHEMA_FILE, want);
    console.log(`wrote ${path.relative(root, MCP_SCHEMA_FILE)}`);
  }
}
