import { accessSync, closeSync, constants, openSync, readSync, statSync } from 'node:fs';

/**
 * Where Chromium is looked for, in order: the headless shell first (Debian's
 * `chromium-headless-shell`, the default engine, docs/engine.md), then the full browser.
 */
export const CHROMIUM_CANDIDATES = [
  '/usr/bin/chromium-headless-shell',
  '/usr/bin/chromium',
  '/usr/bin/chromium-browser',
  '/usr/bin/google-chrome',
  '/usr/bin/google-chrome-stable',
  '/snap/bin/chromium',
] as const;

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The Chromium to launch: `explicit` (the config's CHROME_PATH) when given, else the
 * CHROME_PATH environment variable (for tests and scripts that run without the config), else
 * the first executable of CHROMIUM_CANDIDATES. An explicit path that is not an executable file
 * gives null rather than silently falling back to another browser.
 */
export function findChromium(explicit?: string): string | null {
  const wanted = explicit || process.env.CHROME_PATH;
  if (wanted) return isExecutableFile(wanted) ? wanted : null;
  for (const candidate of CHROMIUM_CANDIDATES) {
    if (isExecutableFile(candidate)) return candidate;
  }
  return null;
}

/** Shell launchers that exec a real binary we can start directly. */
const WRAPPED_BINARIES: Record<string, string> = {
  // Debian's launcher sources /etc/chromium.d, which adds --enable-remote-extensions,
  // --load-extension and GPU flags we do not want, and prints shell noise on stderr.
  '/usr/bin/chromium': '/usr/lib/chromium/chromium',
  // A two-line script that runs the binary as its child (no `exec`): the browser must be the
  // process we spawn, for its process group and its pid.
  '/usr/bin/chromium-headless-shell': '/usr/lib/chromium/chromium-headless-shell',
};

/**
 * The binary to spawn for a found path: the real Chromium behind a known shell launcher, so
 * that our flags are the only flags and the spawned pid is the browser itself.
 */
export function launchableBinary(path: string): string {
  const real = WRAPPED_BINARIES[path];
  if (real === undefined || !isExecutableFile(real)) return path;
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const head = Buffer.alloc(2);
    readSync(fd, head, 0, 2, 0);
    return head.toString('latin1') === '#!' ? real : path;
  } catch {
    return path;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
