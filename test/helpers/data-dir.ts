/**
 * Data directories as operators have them: long (docs/security.md says nothing may depend
 * on the length of DATA_DIR), with a space and a non-ASCII character. Every app, node process
 * and renderer the tests start gets one, so no test can pass on a short path alone.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Harness data directories are longer than this (characters). */
export const LONG_DATA_DIR_MIN = 120;

/** Each directory handed out -> the temp directory it was made in (what removal removes). */
const roots = new Map<string, string>();

/**
 * A fresh, empty directory under the system temp directory whose path is longer than
 * `minLength` characters (default LONG_DATA_DIR_MIN). Remove it with removeDataDir.
 */
export async function longDataDir(tag: string, minLength = LONG_DATA_DIR_MIN): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), `shotsmith-${tag}-`));
  let dir = path.join(root, 'Shotsmith data ü');
  while (dir.length <= minLength) dir = path.join(dir, 'a-rather-long-directory-name');
  await mkdir(dir, { recursive: true });
  roots.set(dir, root);
  return dir;
}

/** Removes a directory from longDataDir with every parent it created. */
export async function removeDataDir(dir: string): Promise<void> {
  const root = roots.get(dir) ?? dir;
  roots.delete(dir);
  await rm(root, { recursive: true, force: true });
}

/** Every file under `dir`, at any depth (a data directory's database and its WAL, say). */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(file)));
    else out.push(file);
  }
  return out;
}
