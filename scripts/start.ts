/**
 * `npm start`: make sure a Chromium is available and the web build (landing page and
 * dashboard) is current, then run the server. On Debian/Ubuntu as root a missing Chromium
 * (its headless shell, the default engine, and the fonts that make pages render as people see
 * them) is installed with apt, with its progress shown; anywhere else we stop with the
 * command to run. Chromium is looked for where the service looks (find-chromium.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { findChromium } from '../src/adapters/browser/process/find-chromium.ts';
import { ensureWebBuild } from './ensure-web-build.ts';

// The headless shell is the default engine (docs/engine.md); the full browser (`chromium`) is
// found and used when only it is installed.
const APT_PACKAGES = [
  'chromium-headless-shell',
  'fonts-noto-color-emoji',
  'fonts-noto-cjk',
  'fonts-liberation',
];

function ensureChromium(): void {
  if (findChromium()) return;
  if (process.env.CHROME_PATH) {
    process.stderr.write(`CHROME_PATH=${process.env.CHROME_PATH} is not an executable file.\n`);
    process.exit(1);
  }
  const command = `apt-get update && apt-get install -y ${APT_PACKAGES.join(' ')}`;
  const canApt = existsSync('/usr/bin/apt-get') && process.getuid?.() === 0;
  if (!canApt) {
    process.stderr.write(
      `Chromium's headless shell was not found. Install it (Debian/Ubuntu) with:\n\n  sudo ${command}\n\n` +
        'or point CHROME_PATH at an existing Chromium, Chrome or headless shell binary.\n',
    );
    process.exit(1);
  }
  process.stdout.write(`Chromium was not found; installing its headless shell with: ${command}\n`);
  for (const args of [['update'], ['install', '-y', ...APT_PACKAGES]]) {
    const result = spawnSync('apt-get', args, {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (result.status !== 0) {
      process.stderr.write(`apt-get ${args[0]} failed (exit ${result.status}).\n`);
      process.exit(1);
    }
  }
  if (!findChromium()) {
    process.stderr.write('apt-get finished but no Chromium binary was found.\n');
    process.exit(1);
  }
}

ensureChromium();
// Built when web/dist is missing or stale; a failed build leaves the API running without it.
process.stdout.write('Checking the web build (landing page and dashboard)...\n');
const web = await ensureWebBuild({ verbose: true });
if (web.status === 'built') process.stdout.write('Web build written to web/dist.\n');
if (web.status === 'failed' || web.status === 'unavailable') {
  process.stderr.write(`The web build is not current: ${web.message}\n`);
}
const main = path.resolve(import.meta.dirname, '..', 'src', 'main.ts');
const child = spawnSync(process.execPath, [main], { stdio: 'inherit' });
process.exit(child.status ?? 1);
