import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { createDiskStorage } from '../../src/adapters/storage/disk-storage.ts';
import { contentTypeForKey, isValidImageKey } from '../../src/adapters/storage/image-keys.ts';
import { createStorage } from '../../src/adapters/storage/index.ts';
import { createS3Storage, type S3Options } from '../../src/adapters/storage/s3-storage.ts';
import { isAppError } from '../../src/domain/errors.ts';
import type { ImageStorage } from '../../src/domain/image-storage.ts';

const HOST = '127.0.0.1';
const BUCKET = 'shots-test';
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

let counter = 0;
/** A fresh valid key: 32 hex-ish characters plus the extension. */
function newKey(ext: 'png' | 'jpeg' | 'jpg' | 'webp' = 'png'): string {
  counter += 1;
  const token = `${Date.now().toString(16)}${counter.toString(16).padStart(8, '0')}`;
  return `${token.padEnd(32, 'a')}.${ext}`;
}

/** Deterministic bytes covering every octet value, so encoding mistakes show up. */
function bytes(length: number, seed: number): Buffer {
  const buf = Buffer.alloc(length);
  for (let i = 0; i < length; i++) buf[i] = (i * 31 + seed) & 0xff;
  return buf;
}

const meta = (contentType: string) => ({
  contentType,
  expiresAt: new Date(Date.now() + 3_600_000),
});

async function rejectsWith(
  promise: Promise<unknown>,
  code: string,
  status?: number,
): Promise<unknown> {
  let caught: unknown;
  await assert.rejects(promise, (err: unknown) => {
    caught = err;
    assert.ok(isAppError(err), `expected AppError, got ${String(err)}`);
    assert.equal(err.code, code);
    if (status !== undefined) assert.equal(err.status, status);
    return true;
  });
  return caught;
}

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === 'object');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return address.port;
}

const INVALID_KEYS = [
  '../x.png',
  'a/b.png',
  'x.exe',
  '',
  '..',
  '../../../../etc/passwd',
  '0123456789abcdef/../x.png',
  '0123456789abcdef\\x.png',
  '0123456789abcdef.png/',
  '0123456789abcdef.PNG',
  '0123456789abcdef.png.exe',
  '0123456789abcdef.gif',
  'short.png',
  `${'a'.repeat(129)}.png`,
  '.0123456789abcdef.png',
  '0123456789abcdef%2F.png',
  '0123456789abcdef.png\0',
  ' 0123456789abcdef.png',
];

/** The behaviour every ImageStorage must have. `open` builds a fresh instance. */
function contractSuite(name: string, open: () => Promise<ImageStorage>): void {
  describe(`${name} storage contract`, () => {
    let storage: ImageStorage;

    before(async () => {
      storage = await open();
    });
    after(async () => {
      await storage.close();
    });

    it('reports its kind', () => {
      assert.equal(storage.kind, name);
    });

    for (const [ext, contentType] of [
      ['png', 'image/png'],
      ['jpeg', 'image/jpeg'],
      ['jpg', 'image/jpeg'],
      ['webp', 'image/webp'],
    ] as const) {
      it(`round-trips exact bytes and content type for .${ext}`, async () => {
        const key = newKey(ext);
        const body = bytes(70_000 + ext.length, ext.charCodeAt(0));
        await storage.put(key, body, meta(contentType));
        const got = await storage.get(key);
        assert.ok(got);
        assert.equal(got.contentType, contentType);
        assert.equal(got.size, body.length);
        assert.ok(Buffer.isBuffer(got.body));
        assert.ok(got.body.equals(body), 'bytes differ');
      });
    }

    it('round-trips an empty body', async () => {
      const key = newKey('png');
      await storage.put(key, Buffer.alloc(0), meta('image/png'));
      const got = await storage.get(key);
      assert.ok(got);
      assert.equal(got.size, 0);
      assert.equal(got.body.length, 0);
    });

    it('overwrites an existing key', async () => {
      const key = newKey('webp');
      await storage.put(key, bytes(5000, 1), meta('image/webp'));
      const second = bytes(1234, 2);
      await storage.put(key, second, meta('image/webp'));
      const got = await storage.get(key);
      assert.ok(got);
      assert.equal(got.size, second.length);
      assert.ok(got.body.equals(second));
    });

    it('returns null for a missing key', async () => {
      assert.equal(await storage.get(newKey('png')), null);
    });

    it('deletes: get after delete is null', async () => {
      const key = newKey('jpeg');
      await storage.put(key, bytes(100, 3), meta('image/jpeg'));
      await storage.delete(key);
      assert.equal(await storage.get(key), null);
    });

    it('lists the keys stored before a time, page by page, for the orphan sweep', async () => {
      const keys = [newKey('png'), newKey('webp'), newKey('jpg')];
      for (const key of keys) await storage.put(key, bytes(10, 4), meta(contentTypeForKey(key)));
      const all = async (olderThan: Date) => {
        const found: string[] = [];
        let cursor: string | null = null;
        for (let page = 0; page < 1_000; page++) {
          const out: { keys: string[]; next: string | null } = await storage.list({
            olderThan,
            cursor,
            limit: 2,
          });
          found.push(...out.keys);
          if (out.next === null) break;
          cursor = out.next;
        }
        return found;
      };
      const later = await all(new Date(Date.now() + 60_000));
      for (const key of keys) assert.ok(later.includes(key), key);
      const earlier = await all(new Date(Date.now() - 60_000));
      for (const key of keys) assert.ok(!earlier.includes(key), key);
      for (const key of keys) await storage.delete(key);
    });

    it('deleting a missing key is fine (and idempotent)', async () => {
      const key = newKey('png');
      await storage.delete(key);
      await storage.delete(key);
    });

    it('keeps keys apart', async () => {
      const k1 = newKey('png');
      const k2 = newKey('png');
      await storage.put(k1, bytes(10, 1), meta('image/png'));
      await storage.put(k2, bytes(10, 2), meta('image/png'));
      await storage.delete(k1);
      assert.equal(await storage.get(k1), null);
      assert.ok((await storage.get(k2))?.body.equals(bytes(10, 2)));
    });

    it('refuses invalid keys in every method with invalid_request', async () => {
      for (const key of INVALID_KEYS) {
        assert.equal(isValidImageKey(key), false, key);
        await rejectsWith(storage.put(key, bytes(10, 0), meta('image/png')), 'invalid_request');
        await rejectsWith(storage.get(key), 'invalid_request');
        await rejectsWith(storage.delete(key), 'invalid_request');
      }
    });

    it('refuses a content type that does not match the key', async () => {
      const key = newKey('png');
      await rejectsWith(storage.put(key, bytes(10, 0), meta('image/jpeg')), 'internal_error');
      assert.equal(await storage.get(key), null);
    });

    it('ping succeeds', async () => {
      await storage.ping();
    });
  });
}

describe('isValidImageKey', () => {
  it('accepts token keys with image extensions', () => {
    for (const key of [
      '0123456789abcdef.png',
      'AbCd_ef-0123456789.jpeg',
      `${'z'.repeat(128)}.jpg`,
      `${'-'.repeat(16)}.webp`,
    ]) {
      assert.equal(isValidImageKey(key), true, key);
    }
  });
  it('rejects everything else', () => {
    for (const key of INVALID_KEYS) assert.equal(isValidImageKey(key), false, key);
    assert.equal(isValidImageKey(undefined as unknown as string), false);
  });
});

// ---------------------------------------------------------------- disk

let diskRoot: string;

before(async () => {
  diskRoot = await mkdtemp(path.join(tmpdir(), 'storage-test-disk-'));
});
after(async () => {
  await rm(diskRoot, { recursive: true, force: true });
});

contractSuite('disk', () => createDiskStorage({ dir: path.join(diskRoot, 'contract', 'nested') }));

describe('disk storage specifics', () => {
  it('shards files by the first two characters and leaves no temp files', async () => {
    const dir = path.join(diskRoot, 'layout');
    const storage = await createStorage({ kind: 'disk', dir });
    assert.equal(storage.kind, 'disk');
    const key = 'ab12cd34ef56ab12cd34ef56ab12cd34.png';
    await storage.put(key, bytes(1000, 5), meta('image/png'));
    await storage.put(key, bytes(900, 6), meta('image/png'));
    assert.deepEqual(await readdir(dir), ['ab']);
    assert.deepEqual(await readdir(path.join(dir, 'ab')), [key]);
    assert.equal((await stat(path.join(dir, 'ab', key))).size, 900);
    await storage.ping();
    assert.deepEqual(await readdir(dir), ['ab'], 'ping leaves nothing behind');
    await storage.close();
  });

  // Disk only: s3rver writes objects in place, so concurrent puts interleave there (real S3 is
  // atomic per object).
  it('concurrent puts and reads of one key never see a partial or mixed image', async () => {
    const storage = await createDiskStorage({ dir: path.join(diskRoot, 'atomic') });
    const key = newKey('png');
    const a = bytes(400_000, 7);
    const b = bytes(300_000, 9);
    await storage.put(key, a, meta('image/png'));
    const ops: Promise<unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      ops.push(storage.put(key, i % 2 ? a : b, meta('image/png')));
      ops.push(
        storage.get(key).then((got) => {
          assert.ok(got, 'the key never disappears during an overwrite');
          assert.ok(got.body.equals(a) || got.body.equals(b), 'partial or mixed image');
        }),
      );
    }
    await Promise.all(ops);
    const shard = path.join(diskRoot, 'atomic', key.slice(0, 2));
    assert.deepEqual(await readdir(shard), [key], 'no temp files left');
  });

  it('does not follow a symlink planted at a key', async () => {
    const dir = path.join(diskRoot, 'symlink');
    const storage = await createDiskStorage({ dir });
    const outside = path.join(diskRoot, 'outside-secret.png');
    await writeFile(outside, 'secret');
    const key = 'cd12cd34ef56ab12cd34ef56ab12cd34.png';
    await mkdir(path.join(dir, 'cd'), { recursive: true });
    await symlink(outside, path.join(dir, 'cd', key));
    await rejectsWith(storage.get(key), 'storage_error');
    // put replaces the link itself, never writes through it.
    await storage.put(key, bytes(10, 1), meta('image/png'));
    assert.equal((await stat(outside)).size, 'secret'.length);
    assert.ok((await storage.get(key))?.body.equals(bytes(10, 1)));
  });

  it('ping fails with storage_error when the directory is unusable', async () => {
    const dir = path.join(diskRoot, 'vanishing');
    const storage = await createDiskStorage({ dir });
    await storage.ping();
    await rm(dir, { recursive: true });
    await writeFile(dir, 'not a directory');
    await rejectsWith(storage.ping(), 'storage_error', 503);
    await rejectsWith(storage.put(newKey('png'), bytes(1, 1), meta('image/png')), 'storage_error');
  });
});

// ---------------------------------------------------------------- s3

let s3rver: S3rver;
let s3Endpoint: string;
let s3Dir: string;

before(async () => {
  s3Dir = await mkdtemp(path.join(tmpdir(), 'storage-test-s3-'));
  s3rver = new S3rver({
    address: HOST,
    port: 0,
    silent: true,
    directory: s3Dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const address = await s3rver.run();
  s3Endpoint = `http://${HOST}:${address.port}`;
});
after(async () => {
  await s3rver.close();
  await rm(s3Dir, { recursive: true, force: true });
});

const s3Options = (overrides: Partial<S3Options> = {}): S3Options => ({
  bucket: BUCKET,
  endpoint: s3Endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  ...CREDENTIALS,
  requestTimeoutMs: 2000,
  ...overrides,
});

contractSuite('s3', () => createS3Storage(s3Options({ prefix: 'contract/' })));

describe('s3 storage specifics', () => {
  it('stores under the prefix with content type (via the factory)', async () => {
    const storage = await createStorage({ kind: 's3', ...s3Options({ prefix: '/shots/' }) });
    assert.equal(storage.kind, 's3');
    const key = newKey('webp');
    await storage.put(key, bytes(321, 4), meta('image/webp'));
    const raw = new S3Client({
      endpoint: s3Endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: CREDENTIALS,
    });
    try {
      const out = await raw.send(new GetObjectCommand({ Bucket: BUCKET, Key: `shots/${key}` }));
      assert.equal(out.ContentType, 'image/webp');
      assert.equal(Buffer.from((await out.Body?.transformToByteArray()) ?? []).length, 321);
    } finally {
      raw.destroy();
      await storage.close();
    }
  });

  it('ping fails with storage_error (500) for a missing bucket', async () => {
    const storage = await createS3Storage(s3Options({ bucket: 'no-such-bucket' }));
    try {
      await rejectsWith(storage.ping(), 'storage_error', 500);
    } finally {
      await storage.close();
    }
  });

  it('refuses half-configured credentials', async () => {
    await rejectsWith(
      createS3Storage(s3Options({ accessKeyId: 'only-id', secretAccessKey: undefined })),
      'storage_error',
    );
  });

  it('fails fast with storage_error (503) against a closed port', async () => {
    const port = await closedPort();
    const storage = await createS3Storage(
      s3Options({ endpoint: `http://${HOST}:${port}`, secretAccessKey: 'do-not-leak-me' }),
    );
    try {
      for (const op of [
        () => storage.ping(),
        () => storage.put(newKey('png'), bytes(100, 1), meta('image/png')),
        () => storage.get(newKey('png')),
        () => storage.delete(newKey('png')),
      ]) {
        const started = performance.now();
        const err = await rejectsWith(op(), 'storage_error', 503);
        assert.ok(performance.now() - started < 5000, 'took too long');
        assert.ok(!String((err as Error).message).includes('do-not-leak-me'));
      }
    } finally {
      await storage.close();
    }
  });

  describe('against a server that accepts connections and never answers', () => {
    let server: Server;
    const sockets = new Set<Socket>();
    let port: number;

    before(async () => {
      server = createServer((socket) => {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {});
      });
      await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
      const address = server.address();
      assert.ok(address !== null && typeof address === 'object');
      port = address.port;
    });
    after(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('ping and put time out with storage_error (503) instead of hanging', async () => {
      const storage = await createS3Storage(
        s3Options({ endpoint: `http://${HOST}:${port}`, requestTimeoutMs: 500 }),
      );
      try {
        for (const op of [
          () => storage.ping(),
          () => storage.put(newKey('png'), bytes(100, 1), meta('image/png')),
        ]) {
          const started = performance.now();
          await rejectsWith(op(), 'storage_error', 503);
          assert.ok(performance.now() - started < 4000, 'took too long');
        }
      } finally {
        await storage.close();
      }
    });
  });
});
