/**
 * The orphan sweep on local disk (sweep-orphan-images.ts; the S3 case is in hung-s3.test.ts):
 * an image that no record points to, older than ORPHAN_IMAGE_MIN_AGE_MS, is deleted; a
 * recorded image, or a young one whose record may still be on its way, stays.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { describeEachDatabase, postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describeEachDatabase('orphan images on disk', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({ '/': page('<h1>kept</h1>') });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort, ORPHAN_IMAGE_MIN_AGE_MS: '60000' },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const images = async () => {
    const root = path.join(t.dataDir, 'images');
    const out: string[] = [];
    for (const shard of await readdir(root)) {
      for (const f of await readdir(path.join(root, shard))) out.push(f);
    }
    return out.sort();
  };
  /** An image file as a capture would store it, `ageMs` old. */
  const stray = async (token: string, ageMs: number) => {
    const dir = path.join(t.dataDir, 'images', token.slice(0, 2));
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `${token}.png`);
    await writeFile(file, 'no record');
    const then = new Date(Date.now() - ageMs);
    await utimes(file, then, then);
    return `${token}.png`;
  };

  it('deletes old images without a record, keeps recorded and young ones', async () => {
    const key = await newApiKey(t);
    const res = await postCapture(t, key, { url: `${site.origin}/`, width: 320, height: 200 });
    assert.equal(res.status, 201);
    const recorded = await images();
    assert.equal(recorded.length, 1);
    // The recorded image, aged past the threshold too: its record keeps it.
    const [shard, name] = [recorded[0]?.slice(0, 2) ?? '', recorded[0] ?? ''];
    const old = new Date(Date.now() - 120_000);
    await utimes(path.join(t.dataDir, 'images', shard, name), old, old);
    const orphan = await stray(`${'ab'.repeat(8)}${Date.now().toString(16)}`, 120_000);
    const young = await stray(`${'cd'.repeat(8)}${Date.now().toString(16)}`, 1_000);

    assert.equal(await t.deps.sweepOrphans(), 1);
    const left = await images();
    assert.ok(!left.includes(orphan), 'the orphan is deleted');
    assert.ok(left.includes(young), 'a young image may still get its record');
    assert.ok(left.includes(name), 'the recorded image stays');
    assert.equal(await t.deps.sweepOrphans(), 0);
  });
});
