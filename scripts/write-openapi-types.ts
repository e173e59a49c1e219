/**
 * Writes the API types of the web app (web/src/api/schema.d.ts) and of the client library
 * (packages/client/src/schema.d.ts) from the committed openapi.json (`npm run
 * openapi:types`; `npm run openapi` runs it after regenerating openapi.json). With `--check`
 * it writes nothing and fails when either is stale: `npm run typecheck` runs it that way.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openapiToTypeScript } from '../tools/openapi-types/generate.ts';

const root = path.resolve(import.meta.dirname, '..');
export const OPENAPI_JSON = path.join(root, 'openapi.json');
export const SCHEMA_TYPES = path.join(root, 'web', 'src', 'api', 'schema.d.ts');
const TARGETS = [SCHEMA_TYPES, path.join(root, 'packages', 'client', 'src', 'schema.d.ts')];

export async function generateOpenApiTypes(openapiJson: string): Promise<string> {
  return openapiToTypeScript(JSON.parse(openapiJson));
}

interface Field {
  type?: string;
  description?: string;
  enum?: string[];
  items?: Field;
  allOf?: Field[];
}

const FIELDS_FILE = path.join(root, 'packages', 'client', 'src', 'capture-fields.ts');

/**
 * The capture request's fields and their JSON types, for the CLI, which turns each into a
 * flag (`full_page` -> `--full-page`) and needs to know how to read its value.
 */
export function generateCaptureFields(openapiJson: string): string {
  const doc = JSON.parse(openapiJson) as {
    paths: Record<
      string,
      Record<
        string,
        {
          requestBody?: {
            content: Record<string, { schema: { properties: Record<string, Field> } }>;
          };
        }
      >
    >;
  };
  const props =
    doc.paths['/v1/screenshots']?.post?.requestBody?.content['application/json']?.schema
      .properties ?? {};
  const lines = Object.entries(props).map(([name, schema]) => {
    const type = schema.type ?? schema.allOf?.[0]?.type ?? 'string';
    const values = schema.enum ?? schema.items?.enum;
    const sentence = (schema.description ?? '').split(/(?<=\.)\s/)[0] ?? '';
    const help = (values ? `One of ${values.join(', ')}. ${sentence}` : sentence)
      .trim()
      .replace(/\\/g, '\\\\')
      .replace(/'/g, "\\'");
    return `  ${name}: { type: '${type}', help: '${help}' },`;
  });
  return [
    '/**',
    " * Generated from openapi.json (`npm run openapi:types`): do not edit. The capture request's",
    ' * fields, their JSON types and the first sentence of their descriptions, for the CLI.',
    ' */',
    'export const CAPTURE_FIELDS = {',
    ...lines,
    '} as const;',
    '',
  ].join('\n');
}

export async function writeOpenApiTypes(): Promise<void> {
  const json = await readFile(OPENAPI_JSON, 'utf8');
  const types = await generateOpenApiTypes(json);
  for (const target of TARGETS) await writeFile(target, types);
  await writeFile(FIELDS_FILE, generateCaptureFields(json));
}

/** The targets whose committed types differ from openapi.json's. */
async function staleTargets(): Promise<string[]> {
  const json = await readFile(OPENAPI_JSON, 'utf8');
  const expected = await generateOpenApiTypes(json);
  const stale: string[] = [];
  for (const target of TARGETS) {
    if ((await readFile(target, 'utf8').catch(() => null)) !== expected) stale.push(target);
  }
  if ((await readFile(FIELDS_FILE, 'utf8').catch(() => null)) !== generateCaptureFields(json)) {
    stale.push(FIELDS_FILE);
  }
  return stale;
}

if (import.meta.main) {
  const relative = (target: string) => path.relative(process.cwd(), target);
  if (process.argv.includes('--check')) {
    const stale = await staleTargets();
    if (stale.length > 0) {
      process.stderr.write(
        `${stale.map(relative).join(', ')} do not match openapi.json: run \`npm run openapi:types\` and commit\n`,
      );
      process.exit(1);
    }
  } else {
    await writeOpenApiTypes();
    process.stdout.write(`wrote ${TARGETS.map(relative).join(', ')}\n`);
  }
}
