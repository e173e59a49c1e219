/**
 * Writes the OpenAPI document generated from the route schemas to openapi.json
 * (`npm run openapi`), then the web app's types from it (scripts/write-openapi-types.ts).
 * test/openapi.test.ts fails when the committed document drifts from the routes, and
 * `npm run typecheck` when the committed types drift from the document.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/config.ts';
import { buildDeps } from '../src/deps.ts';
import { committedDocument } from '../src/http/docs.ts';
import { silentLogger } from '../src/lib/logger.ts';
import { SCHEMA_TYPES, writeOpenApiTypes } from './write-openapi-types.ts';

export async function generateOpenApi(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'shotsmith-openapi-'));
  const deps = await buildDeps(
    loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', NODE_ENV: 'test' }),
    { logger: silentLogger },
  );
  try {
    const app = await buildApp(deps);
    await app.ready();
    const text = `${JSON.stringify(committedDocument(app), null, 2)}\n`;
    await app.close();
    return text;
  } finally {
    await deps.close();
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const out = path.resolve(import.meta.dirname, '..', 'openapi.json');
  await writeFile(out, await generateOpenApi());
  process.stdout.write(`wrote ${out}\n`);
  // The web app's types are generated from the document just written.
  await writeOpenApiTypes();
  process.stdout.write(`wrote ${SCHEMA_TYPES}\n`);
}
