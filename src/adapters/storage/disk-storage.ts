import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError } from '../../domain/errors.ts';
import type { ImageStorage, StoredImage } from '../../domain/image-storage.ts';
import {
  assertValidImageKey,
  assertValidPut,
  contentTypeForKey,
  isValidImageKey,
} from './image-keys.ts';

export interface DiskStorageOptions {
  dir: string;
}

/**
 * errno codes that mean the disk is unavailable (volume gone or read-only, full, I/O errors,
 * descriptor exhaustion): 503. Everything else (EACCES, EISDIR, ELOOP...) is a 500.
 */
const UNAVAILABLE_CODES = new Set([
  'ENOSPC',
  'EDQUOT',
  'EROFS',
  'EIO',
  'EMFILE',
  'ENFILE',
  'EAGAIN',
  'EBUSY',
  'ENOENT',
  'ENOTDIR',
]);

// O_NOFOLLOW is POSIX only; elsewhere 0 (keys are already confined to `dir` by validation).
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;

const errnoCode = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
    ? err.code
    : undefined;

function storageError(action: string, err: unknown): AppError {
  const code = errnoCode(err);
  return new AppError(
    'storage_error',
    `Disk storage ${action} failed${code ? ` (${code})` : ''}.`,
    {
      status: code !== undefined && UNAVAILABLE_CODES.has(code) ? 503 : 500,
      cause: err,
    },
  );
}

const tempSuffix = (): string => `${randomBytes(6).toString('hex')}.tmp`;

/**
 * Images as files under `dir`, sharded by the first two characters of the key
 * (`dir/ab/ab12....png`). Writes go to a temp file in the same shard directory and are renamed
 * into place, so readers see either the old image, the new one, or none; never a partial file.
 * Temp files start with `.` and end with `.tmp`.
 */
export async function createDiskStorage(options: DiskStorageOptions): Promise<ImageStorage> {
  if (typeof options.dir !== 'string' || options.dir === '') {
    throw new AppError('storage_error', 'Disk storage needs a directory.');
  }
  const root = path.resolve(options.dir);
  try {
    await mkdir(root, { recursive: true });
  } catch (err) {
    throw storageError('setup', err);
  }
  return {
    kind: 'disk',
    put: async (key, body, meta) => {
      const file = fileFor(root, key);
      assertValidPut(key, body, meta);
      await writeInPlace(file, body);
    },
    get: async (key) => readImage(fileFor(root, key), contentTypeForKey(key)),
    delete: async (key) => deleteImage(fileFor(root, key)),
    list: (page) => listImages(root, page),
    owns: async () => true,
    ping: () => pingDir(root),
    close: async () => {},
  };
}

/** The file for a key; validated so that it can only ever be `root/xx/key`. */
function fileFor(root: string, key: string): string {
  assertValidImageKey(key);
  const file = path.join(root, key.slice(0, 2), key);
  if (path.dirname(path.dirname(file)) !== root) {
    throw new AppError('invalid_request', 'Invalid image key.');
  }
  return file;
}

/** Writes `file` through a temp file beside it, renamed into place. */
async function writeInPlace(file: string, body: Buffer): Promise<void> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.${tempSuffix()}`);
  try {
    await mkdir(dir, { recursive: true });
    // 'wx': fail rather than write through anything already at the temp path.
    await writeFile(temp, body, { flag: 'wx' });
    await rename(temp, file);
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw storageError('write', err);
  }
}

async function readImage(file: string, contentType: string): Promise<StoredImage | null> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, constants.O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw storageError('read', err);
  }
  try {
    const body = await handle.readFile();
    return { body, contentType, size: body.length };
  } catch (err) {
    throw storageError('read', err);
  } finally {
    await handle.close().catch(() => {});
  }
}

async function deleteImage(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return;
    throw storageError('delete', err);
  }
}

async function listImages(
  root: string,
  { olderThan, cursor, limit }: Parameters<ImageStorage['list']>[0],
): ReturnType<ImageStorage['list']> {
  // A page is whole shard directories, from the cursor's on, until about `limit` keys.
  try {
    const shards = (await readdir(root)).filter((d) => /^[A-Za-z0-9_-]{2}$/.test(d)).sort();
    const keys: string[] = [];
    let i = cursor === null ? 0 : shards.findIndex((d) => d >= cursor);
    for (; i >= 0 && i < shards.length && keys.length < limit; i++) {
      const dir = path.join(root, shards[i] as string);
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        if (!isValidImageKey(name)) continue; // temp files and anything not ours
        const info = await stat(path.join(dir, name)).catch(() => null);
        if (info !== null && info.mtime < olderThan) keys.push(name);
      }
    }
    return { keys, next: i >= 0 && i < shards.length ? (shards[i] as string) : null };
  } catch (err) {
    throw storageError('list', err);
  }
}

/** Writes and removes a probe file: the readiness check. */
async function pingDir(root: string): Promise<void> {
  const probe = path.join(root, `.ping.${tempSuffix()}`);
  try {
    await writeFile(probe, 'ok', { flag: 'wx' });
  } catch (err) {
    throw storageError('readiness check', err);
  } finally {
    // Also when the write failed: on a full disk the file is created, empty, before its
    // write finds no room, and every probe would leave one behind.
    await unlink(probe).catch(() => {});
  }
}
