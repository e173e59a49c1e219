/**
 * A browser's directories: its profile under `<dataDir>/chromium/<random>/` and its own short
 * temp directory (`shotsmith-chromium-XXXXXX` in the system temp directory: HOME, TMPDIR and
 * its sockets), each with an owner file naming the Node process that made it, so that the
 * directories of a process that died (and any Chromium still running on them) are swept at
 * the next start. A temp root is shared with other local users: nothing there is trusted.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Logger } from '../../../lib/logger.ts';
import { isAlive, killTree, ownStartTime, processesMentioning } from './proc.ts';

/** A profile directory without an owner file younger than this may still be starting. */
const OWNERLESS_GRACE_MS = 60_000;

/** Chromium's temp directories: `<temp root>/shotsmith-chromium-XXXXXX`. */
const TEMP_PREFIX = 'shotsmith-chromium-';
const TEMP_NAME = /^shotsmith-chromium-[A-Za-z0-9]{6}$/;
/**
 * The longest system temp directory Chromium's own temp directory goes under. Chromium puts its
 * singleton socket (its only named socket) at `$TMPDIR/org.chromium.Chromium.XXXXXX/
 * SingletonSocket`, 46 characters below TMPDIR, and a Unix socket path holds at most 107 bytes:
 * with our 26-character directory the base may have 35. A longer os.tmpdir() (TMPDIR set to a
 * long path) gives /tmp.
 */
const MAX_TEMP_BASE_BYTES = 32;

/** Where Chromium's temp directories go; never depends on DATA_DIR. */
export function chromiumTempRoot(): string {
  const base = tmpdir();
  return Buffer.byteLength(base) <= MAX_TEMP_BASE_BYTES ? base : '/tmp';
}

const chromiumRoot = (dataDir: string): string => join(dataDir, 'chromium');

/** One browser's directories, made for its launch. */
export interface ProfileDirs {
  /** `<dataDir>/chromium/<random>`: profile and owner file. */
  dir: string;
  /** `<dir>/profile`: Chromium's user data directory. */
  profile: string;
  /** `<temp root>/shotsmith-chromium-XXXXXX`: HOME, TMPDIR, sockets and owner file. */
  tmp: string;
}

/**
 * Makes a new browser's profile directory and its temp directory, each with our owner file.
 * Everything Chromium writes outside the profile (NSS db, caches, crash dirs, temp files,
 * its singleton socket) goes to a short directory of its own: a Unix socket path has at
 * most 107 bytes, and DATA_DIR may be as long as an operator likes.
 */
export function makeProfileDirs(dataDir: string): ProfileDirs {
  const dir = join(chromiumRoot(dataDir), randomBytes(8).toString('hex'));
  const profile = join(dir, 'profile');
  mkdirSync(profile, { recursive: true });
  writeOwner(dir);
  try {
    const tmp = mkdtempSync(join(chromiumTempRoot(), TEMP_PREFIX));
    writeOwner(tmp);
    writeFileSync(join(dir, 'tmpdir'), `${tmp}\n`);
    return { dir, profile, tmp };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

function writeOwner(dir: string): void {
  const owner = `${process.pid} ${ownStartTime() ?? ''}`.trim();
  writeFileSync(join(dir, 'owner'), `${owner}\n`);
}

/** The temp directory a profile directory recorded, if it is one of ours. */
function recordedTempDir(dir: string): string | null {
  const recorded = readSmallFile(join(dir, 'tmpdir'))?.trim() ?? '';
  return TEMP_NAME.test(basename(recorded)) ? recorded : null;
}

/**
 * A small file read without trusting it (a temp root is shared with other local users): not
 * through a symlink, never blocking (a FIFO), a regular file only, at most `max` bytes.
 */
function readSmallFile(path: string, max = 256): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(max);
    return buf.toString('utf8', 0, readSync(fd, buf, 0, max, 0));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A temp directory we may remove: a real directory (no symlink), ours, mode 0700. */
function isOwnTempDir(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o700;
  } catch {
    return false;
  }
}

/** SIGKILLs whatever still runs on `dir` (its path in their command line), then removes it. */
export async function removeWithProcesses(dir: string): Promise<void> {
  for (const pid of processesMentioning(dir)) await killTree(pid);
  rmSync(dir, { recursive: true, force: true });
}

/** Whether a directory of ours is stale: its owner is gone (or it never got one). */
function isStale(dir: string): boolean {
  const owner = readOwner(dir);
  if (owner !== null) return !isAlive(owner.pid, owner.startTime);
  try {
    return Date.now() - lstatSync(dir).mtimeMs >= OWNERLESS_GRACE_MS;
  } catch {
    return false;
  }
}

/** The owner file holds `<pid> <start time>` (older ones only the pid). */
function readOwner(dir: string): { pid: number; startTime?: string } | null {
  const text = readSmallFile(join(dir, 'owner'));
  if (text === null) return null;
  const [pidText = '', startTime] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return startTime ? { pid, startTime } : { pid };
}

/**
 * Removes profile directories left by earlier runs (the owning Node process is gone), first
 * SIGKILLing any Chromium still running on them, and Chromium temp directories of dead owners
 * (whichever data directory they served). Directories of live owners (another renderer on the
 * same data dir, e.g. a parallel test file) are left alone.
 */
export async function sweepStaleProfiles(dataDir: string, logger: Logger): Promise<number> {
  const root = chromiumRoot(dataDir);
  let swept = 0;
  let names: string[] = [];
  try {
    names = readdirSync(root);
  } catch {
    // No profiles yet.
  }
  for (const name of names) {
    const dir = join(root, name);
    if (!isStale(dir)) continue;
    const temp = recordedTempDir(dir);
    await removeWithProcesses(dir);
    if (temp !== null && isOwnTempDir(temp)) await removeWithProcesses(temp);
    swept++;
  }
  const tempRoot = chromiumTempRoot();
  let temps: string[] = [];
  try {
    temps = readdirSync(tempRoot).filter((name) => TEMP_NAME.test(name));
  } catch {
    // Nothing to sweep.
  }
  for (const name of temps) {
    const dir = join(tempRoot, name);
    // Another local user may have planted it (or a symlink by that name): leave it.
    if (!isOwnTempDir(dir) || !isStale(dir)) continue;
    try {
      await removeWithProcesses(dir);
      swept++;
    } catch {
      // Another user's directory in a shared /tmp: not ours to remove.
    }
  }
  if (swept > 0) logger.info({ swept, dir: root }, 'removed stale chromium profiles');
  return swept;
}
