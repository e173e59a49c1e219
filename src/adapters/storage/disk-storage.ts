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

  const shardDir = (key: string): string => path.join(root, key.slice(0, 2));

  /** The file for a key; validated so that it can only ever be `root/xx/key`. */
  const fileFor = (key: string): string => {
    assertValidImageKey(key);
    const file = path.join(shardDir(key), key);
    if (path.dirname(path.dirname(file)) !== root) {
      throw new AppError('invalid_request', 'Invalid image key.');
    }
    return file;
  };

  return {
    kind: 'disk',

    async put(key, body, meta) {
      const file = fileFor(key);
      assertValidPut(key, body, meta);
      const dir = path.dirname(file);
      const temp = path.join(dir, `.${key}.${tempSuffix()}`);
      try {
        await mkdir(dir, { recursive: true });
        // 'wx': fail rather than write through anything already at the temp path.
        await writeFile(temp, body, { flag: 'wx' });
        await rename(temp, file);
      } catch (err) {
        await unlink(temp).catch(() => {});
        throw storageError('write', err);
      }
    },

    async get(key): Promise<StoredImage | null> {
      const file = fileFor(key);
      const contentType = contentTypeForKey(key);
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
    },

    async delete(key) {
      const file = fileFor(key);
      try {
        await unlink(file);
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') return;
        throw storageError('delete', err);
      }
    },

    async list({ olderThan, cursor, limit }) {
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
    },

    async owns() {
      return true;
    },

    async ping() {
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
    },

    async close() {},
  };
}
