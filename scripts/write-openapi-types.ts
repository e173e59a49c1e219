/**
 * Writes the web app's API types, web/src/api/schema.d.ts, from the committed openapi.json
 * (`npm run openapi:types`; `npm run openapi` runs it after regenerating openapi.json).
 * With `--check` it writes nothing and fails when the committed types are stale:
 * `npm run typecheck` runs it that way.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openapiToTypeScript } from '../tools/openapi-types/generate.ts';

const root = path.resolve(import.meta.dirname, '..');
export const OPENAPI_JSON = path.join(root, 'openapi.json');
export const SCHEMA_TYPES = path.join(root, 'web', 'src', 'api', 'schema.d.ts');

export async function generateOpenApiTypes(openapiJson: string): Promise<string> {
  return openapiToTypeScript(JSON.parse(openapiJson));
}

export async function writeOpenApiTypes(): Promise<void> {
  await writeFile(SCHEMA_TYPES, await generateOpenApiTypes(await readFile(OPENAPI_JSON, 'utf8')));
}

async function checkOpenApiTypes(): Promise<boolean> {
  const expected = await generateOpenApiTypes(await readFile(OPENAPI_JSON, 'utf8'));
  const committed = await readFile(SCHEMA_TYPES, 'utf8').catch(() => null);
  return committed === expected;
}

if (import.meta.main) {
  const relative = path.relative(process.cwd(), SCHEMA_TYPES);
  if (process.argv.includes('--check')) {
    if (!(await checkOpenApiTypes())) {
      process.stderr.write(
        `${relative} does not match openapi.json: run \`npm run openapi:types\` and commit it\n`,
      );
      process.exit(1);
    }
  } else {
    await writeOpenApiTypes();
    process.stdout.write(`wrote ${relative}\n`);
  }
}
