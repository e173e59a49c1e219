/**
 * A hung object store (the test's s3rver, a process of its own, frozen with SIGSTOP): captures
 * answer within their deadline, 503 `storage_error` with Retry-After and no unit spent; the
 * uploads that timed out and landed once the store resumed are deleted by the orphan sweep,
 * and the images that have records stay (docs/deployment.md, "When a dependency fails").
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import {
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { nodeAccount } from '../helpers/accounts.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../helpers/node-process.ts';
import { type S3Process, startS3Process } from '../helpers/s3rver-process.ts';

describe('a hung S3', () => {
  let site: FixtureSite;
  let s3: S3Process;
  let node: NodeProcess;
  let key = '';
  let width = 300;

  before(async () => {
    site = await startSite({ '/': page('<h1>stored</h1>') });
    s3 = await startS3Process();
    node = await startNode('hung-s3', {
      ...s3.env,
      EGRESS_ALLOWLIST: site.hostPort,
      ORPHAN_IMAGE_MIN_AGE_MS: '5000',
    });
    ({ key } = await nodeAccount(node, { key: true }));
  });
  after(async () => {
    await node?.stop();
    await s3?.close();
    await site?.close();
  });

  const capture = () =>
    node.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${site.origin}/`, width: width++, height: 200 },
    });
  const used = async () =>
    (
      (await (await node.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;
  const s3Client = () =>
    new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
  const objects = async () => {
    const client = s3Client();
    try {
      const out = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      return (out.Contents ?? []).map((o) => o.Key as string).sort();
    } finally {
      client.destroy();
    }
  };
  const records = () => {
    const db = new DatabaseSync(path.join(node.dataDir, 'shotsmith.sqlite'), { readOnly: true });
    try {
      return (
        db.prepare('SELECT token, ext FROM screenshots').all() as Array<{
          token: string;
          ext: string;
        }>
      ).map((r) => `${r.token}.${r.ext}`);
    } finally {
      db.close();
    }
  };

  it('answers 503 storage_error in time; after SIGCONT no object without a record stays', async () => {
    const first = await capture();
    assert.equal(first.status, 201);
    const { image_url: imageUrl } = (await first.json()) as { image_url: string };
    const stored = await objects();
    assert.equal(stored.length, 1);

    process.kill(s3.pid, 'SIGSTOP');
    let resumed = false;
    try {
      const started = Date.now();
      const answers = await Promise.all([capture(), capture(), capture()]);
      // The render (about a second each, one slot) and S3's bound: 2 x 5 s + 1 s.
      assert.ok(Date.now() - started < 45_000, `answered in ${Date.now() - started} ms`);
      for (const res of answers) {
        const body = (await res.json()) as { code?: string };
        assert.equal(res.status, 503, JSON.stringify(body));
        assert.equal(body.code, 'storage_error');
        assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
      }
      assert.equal(await used(), 1, 'no unit spent on the failed captures');
      // Reading an image, and the readiness probe, also answer in time.
      let t0 = Date.now();
      const image = await fetch(imageUrl);
      assert.equal(image.status, 503, await image.clone().text());
      assert.equal(((await image.json()) as { code: string }).code, 'storage_error');
      assert.ok(Number(image.headers.get('retry-after')) >= 1, 'Retry-After');
      assert.ok(Date.now() - t0 < 20_000, `image answered in ${Date.now() - t0} ms`);
      t0 = Date.now();
      const ready = await node.fetch('/readyz');
      await ready.body?.cancel();
      assert.equal(ready.status, 503);
      assert.ok(Date.now() - t0 < 10_000, `readyz answered in ${Date.now() - t0} ms`);
      process.kill(s3.pid, 'SIGCONT');
      resumed = true;
    } finally {
      if (!resumed) process.kill(s3.pid, 'SIGCONT');
    }

    // The store works through what it received while frozen; the sweep (images older than
    // 5 s, every 2.5 s) deletes what landed without a record.
    const deadline = Date.now() + 60_000;
    let orphans: string[] = [];
    for (;;) {
      const known = new Set(records());
      orphans = (await objects()).filter((k) => !known.has(k));
      if (orphans.length === 0 && Date.now() > deadline - 45_000) break;
      if (Date.now() > deadline) break;
      await sleep(500);
    }
    assert.deepEqual(orphans, [], 'no object without a record');
    assert.deepEqual(await objects(), stored, 'the recorded image stays');
    assert.equal((await capture()).status, 201, 'captures are stored again');
  });

  it('sweeps an image no record points to (its node died before the record), keeps the rest', async () => {
    const before = await objects();
    const client = s3Client();
    const name = (n: number) =>
      `${String(n).repeat(8)}${Date.now().toString(16).padStart(24, '0')}.png`;
    // An image of this deployment (another of its nodes died before the record): tagged
    // like every image it writes. Beside it, a shared bucket's other objects: one another
    // deployment wrote (its own tag), one from before tags or another tool (none).
    const orphan = name(0);
    const foreign = [name(1), name(2)];
    try {
      const recorded = before[0];
      assert.ok(recorded, 'an image with a record');
      const head = await client.send(new HeadObjectCommand({ Bucket: s3.bucket, Key: recorded }));
      const tag = head.Metadata?.['shotsmith-owner'];
      assert.match(String(tag), /^[0-9a-f]{32}$/, 'images carry their deployment tag');
      const put = (Key: string, Metadata?: Record<string, string>) =>
        client.send(
          new PutObjectCommand({
            Bucket: s3.bucket,
            Key,
            Body: Buffer.from('not a record'),
            ContentType: 'image/png',
            ...(Metadata ? { Metadata } : {}),
          }),
        );
      await put(orphan, { 'shotsmith-owner': String(tag) });
      await put(foreign[0] as string, { 'shotsmith-owner': 'f'.repeat(32) });
      await put(foreign[1] as string);
    } finally {
      client.destroy();
    }
    assert.ok((await objects()).includes(orphan));
    // Older than 5 s, then found by a sweep (every 2.5 s).
    const deadline = Date.now() + 60_000;
    while ((await objects()).includes(orphan) && Date.now() < deadline) await sleep(500);
    await sleep(6_000); // another sweep or two, which must leave the others alone
    assert.deepEqual(
      await objects(),
      [...before, ...foreign].sort(),
      "this deployment's orphan is gone; recorded images and other deployments' objects stay",
    );
  });
});
