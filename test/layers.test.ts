/**
 * The layering rule (biome.json overrides, `noRestrictedImports`) fails `npm run lint` on a
 * wrong-way import: each probe is written into its layer's folder, linted, and removed.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIOME = path.join(ROOT, 'node_modules', '.bin', 'biome');

/** Lints `source` as a file in `folder` (under src/); the restricted imports it reports. */
async function lintAs(folder: string, source: string): Promise<{ ok: boolean; lines: number[] }> {
  const file = path.join(ROOT, 'src', folder, `layer-probe-${process.pid}.ts`);
  await writeFile(file, source);
  try {
    const run = spawnSync(BIOME, ['lint', '--max-diagnostics=50', file], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    const output = `${run.stdout}${run.stderr}`;
    const lines = [
      ...output.matchAll(/layer-probe-\d+\.ts:(\d+):\d+ lint\/style\/noRestrictedImports/g),
    ].map((m) => Number(m[1]));
    return { ok: run.status === 0, lines };
  } finally {
    await rm(file, { force: true });
  }
}

describe('layers', () => {
  it('domain/ imports no adapter, no http/, no composition root and no driver', async () => {
    const result = await lintAs(
      'domain',
      [
        "import type { DatabaseHandle } from '../adapters/db/connect.ts';",
        "import type { RouteDeps } from '../http/types.ts';",
        "import type { AppDeps } from '../deps.ts';",
        "import type { Kysely } from 'kysely';",
        "import type { FastifyRequest } from 'fastify';",
        "import type { S3Client } from '@aws-sdk/client-s3';",
        "export { createStorage } from '../adapters/storage/index.ts';",
        "export const load = () => import('../adapters/db/kysely-store.ts');",
        'export type Probe = [DatabaseHandle, RouteDeps, AppDeps, Kysely<never>, FastifyRequest, S3Client];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it('http/ imports no adapter and not the composition root', async () => {
    const result = await lintAs(
      'http',
      [
        "import type { Metrics } from '../adapters/metrics/metrics.ts';",
        "import type { AppDeps } from '../deps.ts';",
        'export type Probe = [Metrics, AppDeps];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2]);
  });

  it('adapters/ import no http/', async () => {
    const result = await lintAs(
      'adapters',
      ["import type { App } from '../http/types.ts';", 'export type Probe = App;', ''].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1]);
  });

  it('adapters/egress imports neither the browser nor the webhook sender that use it', async () => {
    const result = await lintAs(
      'adapters/egress',
      [
        "import type { CapturePage } from '../browser/page/capture-page.ts';",
        "import type { ProxySender } from '../webhooks/proxy-sender.ts';",
        "import type { Page } from 'puppeteer-core';",
        "import type { App } from '../../http/types.ts';",
        "import type { CheckedDestination } from './policy.ts';",
        'export type Probe = [CapturePage, ProxySender, Page, App, CheckedDestination];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2, 3, 4]);
  });

  it('adapters/browser/process (one Chromium) imports neither page/ nor pool/', async () => {
    const result = await lintAs(
      'adapters/browser/process',
      [
        "import type { CapturePage } from '../page/capture-page.ts';",
        "import type { PagePool } from '../pool/page-pool.ts';",
        "import type { LazyRenderer } from '../index.ts';",
        "import type { ChromiumRenderer } from '../../browser/pool/chromium-renderer.ts';",
        "import type { App } from '../../../http/types.ts';",
        "import type { BrowserInstance } from './browser-instance.ts';",
        'export type Probe = [CapturePage, PagePool, LazyRenderer, ChromiumRenderer, App, BrowserInstance];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2, 3, 4, 5]);
  });

  it('adapters/browser/page (one capture) imports no pool/, and process/ freely', async () => {
    const result = await lintAs(
      'adapters/browser/page',
      [
        "import type { PagePool } from '../pool/page-pool.ts';",
        "import type { LazyRenderer } from '../index.ts';",
        "import type { App } from '../../../http/types.ts';",
        "import type { BrowserInstance } from '../process/browser-instance.ts';",
        "import type { CaptureRun } from './capture-run.ts';",
        'export type Probe = [PagePool, LazyRenderer, App, BrowserInstance, CaptureRun];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2, 3]);
  });

  it('adapters/browser/page/*/ (a part of one capture) imports no pool/ either', async () => {
    const result = await lintAs(
      'adapters/browser/page/steps',
      [
        "import type { PagePool } from '../../pool/page-pool.ts';",
        "import type { LazyRenderer } from '../../index.ts';",
        "import type { ChromiumRenderer } from '../../../browser/pool/chromium-renderer.ts';",
        "import type { BrowserInstance } from '../../process/browser-instance.ts';",
        "import type { CaptureRun } from '../capture-run.ts';",
        "import type { RequestRules } from '../network/request-rules.ts';",
        'export type Probe = [PagePool, LazyRenderer, ChromiumRenderer, BrowserInstance, CaptureRun, RequestRules];',
        '',
      ].join('\n'),
    );
    assert.equal(result.ok, false);
    assert.deepEqual(result.lines, [1, 2, 3]);
  });

  it('adapters/browser/pool imports page/ and process/ (the right way down)', async () => {
    const result = await lintAs(
      'adapters/browser/pool',
      [
        "import type { CapturePage } from '../page/capture-page.ts';",
        "import type { BrowserInstance } from '../process/browser-instance.ts';",
        "import type { PagePool } from './page-pool.ts';",
        'export type Probe = [CapturePage, BrowserInstance, PagePool];',
        '',
      ].join('\n'),
    );
    assert.deepEqual(result, { ok: true, lines: [] });
  });

  it('the right way round passes: http -> domain -> ports', async () => {
    const result = await lintAs(
      'http',
      [
        "import type { CaptureContext } from '../domain/captures/ports.ts';",
        "import type { ImageStorage } from '../domain/image-storage.ts';",
        'export type Probe = [CaptureContext, ImageStorage];',
        '',
      ].join('\n'),
    );
    assert.deepEqual(result, { ok: true, lines: [] });
  });
});
