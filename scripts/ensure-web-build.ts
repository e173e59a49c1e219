/**
 * Builds web/ into web/dist when the build is missing or stale, for `npm start` and for the
 * tests that drive the pages (the one place that decides). "Stale" means the sources, the
 * Vite config, the lockfile or VITE_API_BASE differ from what the last build recorded in
 * web/dist/.build-stamp.json: a content hash, so checkouts that only touch mtimes do not
 * rebuild and clock skew cannot hide a change. Every Vite build writes that stamp (the
 * config calls writeBuildStamp), `npm run build:web` included.
 *
 * Several processes may ask at once (test files run in parallel): a lock file serialises
 * them, and each build goes to its own directory that is renamed into place, so a reader
 * sees the old build or the new one, never half of one.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const WEB = path.join(ROOT, 'web');
export const WEB_DIST = path.join(WEB, 'dist');
const STAMP_FILE = '.build-stamp.json';
const VITE_BIN = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
/** What the output depends on, besides VITE_API_BASE. */
const INPUTS = ['src', 'index.html', 'dashboard.html', 'vite.config.ts'];
const LOCK_WAIT_MS = 180_000;

export interface EnsureWebBuildOptions {
  /** Print Vite's output as it builds (npm start); otherwise it is shown only on failure. */
  verbose?: boolean;
  /** Default process.env.VITE_API_BASE. */
  apiBase?: string;
  /** Default web/dist, which the app serves; tests build variants elsewhere. */
  distDir?: string;
}

export type WebBuildOutcome =
  | { status: 'fresh' | 'built' }
  | { status: 'failed' | 'unavailable'; message: string };

export async function ensureWebBuild(
  options: EnsureWebBuildOptions = {},
): Promise<WebBuildOutcome> {
  const apiBase = options.apiBase ?? process.env.VITE_API_BASE ?? '';
  const distDir = path.resolve(options.distDir ?? WEB_DIST);
  const hash = await sourceHash(apiBase);
  if ((await stampHash(distDir)) === hash) return { status: 'fresh' };
  if (!existsSync(VITE_BIN)) {
    return {
      status: 'unavailable',
      message: existsSync(distDir)
        ? 'web/ changed but Vite is not installed (devDependencies); serving the existing build'
        : 'web/dist is missing and Vite is not installed; run `npm ci` (with devDependencies) ' +
          'and `npm run build:web`',
    };
  }
  // Siblings of the output directory, so the final rename stays on one file system.
  const beside = (tag: string) =>
    path.join(path.dirname(distDir), `.${tag}-${path.basename(distDir)}`);
  const release = await acquireLock(beside('build-lock'));
  try {
    // Another process may have built it while we waited.
    if ((await stampHash(distDir)) === hash) return { status: 'fresh' };
    return await build({ hash, apiBase, distDir, verbose: options.verbose ?? false, beside });
  } finally {
    await release();
  }
}

async function build(job: {
  hash: string;
  apiBase: string;
  distDir: string;
  verbose: boolean;
  beside: (tag: string) => string;
}): Promise<WebBuildOutcome> {
  const { hash, apiBase, distDir, verbose } = job;
  const outDir = job.beside(`build-${process.pid}`);
  await rm(outDir, { recursive: true, force: true });
  const args = [VITE_BIN, 'build', '--config', path.join(WEB, 'vite.config.ts')];
  args.push('--outDir', outDir, '--emptyOutDir');
  const output: string[] = [];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: ROOT,
      env: { ...process.env, VITE_API_BASE: apiBase },
      stdio: verbose ? 'inherit' : 'pipe',
    });
    child.stdout?.on('data', (chunk: Buffer) => output.push(String(chunk)));
    child.stderr?.on('data', (chunk: Buffer) => output.push(String(chunk)));
    child.once('error', reject);
    child.once('close', resolve);
  });
  // The stamp is written by the build itself (web/vite.config.ts); without it the output is
  // not trusted.
  if (code !== 0 || (await stampHash(outDir)) !== hash) {
    await rm(outDir, { recursive: true, force: true });
    const reason = code !== 0 ? `vite build exited with ${code}` : 'the build wrote no stamp';
    return { status: 'failed', message: `${reason}${verbose ? '' : `:\n${output.join('')}`}` };
  }
  const old = job.beside(`old-${process.pid}`);
  if (existsSync(distDir)) await rename(distDir, old);
  await rename(outDir, distDir);
  await rm(old, { recursive: true, force: true });
  return { status: 'built' };
}

/** Records what a finished build was made from; called by web/vite.config.ts. */
export async function writeBuildStamp(distDir: string, apiBase: string): Promise<void> {
  const stamp = { hash: await sourceHash(apiBase), apiBase, builtAt: new Date().toISOString() };
  await writeFile(path.join(distDir, STAMP_FILE), `${JSON.stringify(stamp)}\n`);
}

async function sourceHash(apiBase: string): Promise<string> {
  const hash = createHash('sha256').update(`VITE_API_BASE=${apiBase}\n`);
  const files = [path.join(ROOT, 'package-lock.json')];
  for (const input of INPUTS) files.push(...(await listFiles(path.join(WEB, input))));
  for (const file of files.sort()) {
    hash.update(`${path.relative(ROOT, file)}\n`);
    hash.update(await readFile(file).catch(() => Buffer.alloc(0)));
  }
  return hash.digest('hex');
}

async function listFiles(target: string): Promise<string[]> {
  const entries = await readdir(target, { recursive: true, withFileTypes: true }).catch(() => null);
  if (entries === null) return existsSync(target) ? [target] : [];
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

async function stampHash(distDir: string): Promise<string | null> {
  try {
    const stamp = await readFile(path.join(distDir, STAMP_FILE), 'utf8');
    return (JSON.parse(stamp) as { hash?: string }).hash ?? null;
  } catch {
    return null;
  }
}

/** An exclusive lock file holding the builder's pid; a dead holder's lock is taken over. */
async function acquireLock(lock: string): Promise<() => Promise<void>> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    // Written aside and linked into place, so the lock never exists without its pid.
    const mine = `${lock}-${process.pid}`;
    await writeFile(mine, String(process.pid));
    try {
      await link(mine, lock);
      return () => rm(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await rm(mine, { force: true });
    }
    const holder = Number(await readFile(lock, 'utf8').catch(() => ''));
    if (!isAlive(holder)) {
      await rm(lock, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`web build lock ${lock} held by pid ${holder}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
