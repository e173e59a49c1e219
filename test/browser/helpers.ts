/**
 * Helpers shared by the browser tests: a renderer on a throw-away data dir, complete render
 * options, decoded pixels, and a look at our Chromium processes through /proc.
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode as decodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';
import {
  type ChromiumRenderer,
  type ChromiumRendererOptions,
  createChromiumRenderer,
  RENDERER_TUNING,
  type RendererTuning,
} from '../../src/adapters/browser/pool/chromium-renderer.ts';
import {
  findChromium,
  launchableBinary,
} from '../../src/adapters/browser/process/find-chromium.ts';
import {
  listProcesses,
  processesMentioning,
  processTree,
} from '../../src/adapters/browser/process/proc.ts';
import type { RenderSettings } from '../../src/config/config.ts';
import { resolveCaptureOptions } from '../../src/domain/captures/capture-options.ts';
import type { Renderer, RenderOptions } from '../../src/domain/captures/renderer.ts';
import { AppError, type ErrorCode } from '../../src/domain/errors.ts';
import { DEFAULT_PLANS } from '../../src/domain/plans.ts';
import { type Logger, silentLogger } from '../../src/lib/logger.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { renderSettings } from '../helpers/render-settings.ts';

export interface TestRenderer {
  renderer: ChromiumRenderer;
  dataDir: string;
  /** Renders with a deadline `timeoutMs` from now. */
  render(
    options: Partial<RenderOptions> & { url: string },
    timeoutMs?: number,
  ): ReturnType<Renderer['render']>;
  close(): Promise<void>;
}

const consoleLogger: Logger = {
  debug: () => {},
  info: (obj: object, msg: string) => console.log('info', msg, JSON.stringify(obj)),
  warn: (obj: object, msg: string) => console.log('warn', msg, JSON.stringify(obj)),
  error: (obj: object, msg: string) => console.log('error', msg, JSON.stringify(obj)),
};

/** Every option at its default, as the option table resolves it on the Pro plan. */
const DEFAULTS: RenderOptions = resolveCaptureOptions(
  { url: 'https://example.com/' },
  new URL('https://example.com/'),
  DEFAULT_PLANS.pro,
).render;

/** The defaults, a 400x300 viewport, then `options`. */
export function renderOptions(options: Partial<RenderOptions> & { url: string }): RenderOptions {
  return { ...DEFAULTS, width: 400, height: 300, ...options };
}

/**
 * What a browser test changes, by name: render settings (the config's defaults otherwise), the
 * renderer's tuning (RENDERER_TUNING otherwise), and its hooks.
 */
export type TestRendererOptions = Partial<RenderSettings> &
  Partial<RendererTuning> &
  Partial<Pick<ChromiumRendererOptions, 'proxyUrl' | 'checkNavigation' | 'logger'>>;

export async function startRenderer(options: TestRendererOptions = {}): Promise<TestRenderer> {
  const dataDir = await longDataDir('browser-test');
  const { proxyUrl, checkNavigation, logger, ...settings } = options;
  const render: Record<string, unknown> = {};
  const tuning: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(settings)) {
    (name in RENDERER_TUNING ? tuning : render)[name] = value;
  }
  const renderer = await createChromiumRenderer({
    render: renderSettings({ concurrency: 2, queueSize: 10, maxPageHeight: 16_384, ...render }),
    tuning,
    dataDir,
    // BROWSER_TEST_LOG=1 prints the renderer's log lines while debugging a test.
    logger: logger ?? (process.env.BROWSER_TEST_LOG ? consoleLogger : silentLogger),
    ...(proxyUrl ? { proxyUrl } : {}),
    ...(checkNavigation ? { checkNavigation } : {}),
  });
  return {
    renderer,
    dataDir,
    render: (options, timeoutMs = 15_000) =>
      renderer.render(renderOptions(options), { deadline: Date.now() + timeoutMs }),
    close: async () => {
      await renderer.close();
      await removeDataDir(dataDir);
    },
  };
}

/**
 * The short temp directories (HOME, TMPDIR) of this renderer's live browsers, as their profile
 * directories under `<dataDir>/chromium/` record them.
 */
export function tempDirs(dataDir: string): string[] {
  const root = join(dataDir, 'chromium');
  const out: string[] = [];
  for (const name of existsSync(root) ? readdirSync(root) : []) {
    try {
      out.push(readFileSync(join(root, name, 'tmpdir'), 'utf8').trim());
    } catch {
      // Being created or removed.
    }
  }
  return out;
}

/**
 * Live processes started for this renderer: those whose command line names its data dir (the
 * browser; on the full browser its children too) or one of its temp dirs (crashpad handlers,
 * which live outside the browser's process group), and their process trees (the headless
 * shell's children carry no --user-data-dir). `extraTempDirs`: temp dirs seen earlier, e.g.
 * before a close.
 */
export function chromiumProcesses(dataDir: string, extraTempDirs: string[] = []): number[] {
  const named = [
    ...processesMentioning(join(dataDir, 'chromium')),
    ...[...tempDirs(dataDir), ...extraTempDirs].flatMap((dir) => processesMentioning(dir)),
  ];
  const procs = listProcesses();
  return [
    ...new Set(
      named.flatMap((pid) =>
        processTree(pid, procs)
          .filter((p) => p.state !== 'Z')
          .map((p) => p.pid),
      ),
    ),
  ];
}

/** Our renderer processes (one per page, roughly). */
export function rendererPids(dataDir: string): number[] {
  return chromiumProcesses(dataDir).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=renderer');
    } catch {
      return false;
    }
  });
}

/** The browser process: the one of ours that is not a --type= child. */
export function browserPid(dataDir: string): number {
  for (const pid of chromiumProcesses(dataDir)) {
    let cmd: string;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (cmd.includes('--remote-debugging-pipe') && !cmd.includes('--type=')) return pid;
  }
  throw new Error('no browser process found');
}

export interface Pixels {
  width: number;
  height: number;
  /** RGBA at (x, y). */
  at(x: number, y: number): [number, number, number, number];
}

export function decodeImage(image: Buffer): Pixels {
  let width: number;
  let height: number;
  let data: Uint8Array;
  if (image[0] === 0x89) {
    const png = PNG.sync.read(image);
    ({ width, height, data } = png);
  } else {
    const jpeg = decodeJpeg(image, { useTArray: true, formatAsRGBA: true });
    ({ width, height, data } = jpeg);
  }
  return {
    width,
    height,
    at(x, y) {
      const i = (y * width + x) * 4;
      return [data[i] ?? -1, data[i + 1] ?? -1, data[i + 2] ?? -1, data[i + 3] ?? -1];
    },
  };
}

/** Whether two colours are within `tolerance` per channel (JPEG and scaling blur edges). */
export function near(actual: number[], expected: number[], tolerance = 8): boolean {
  return expected.every((v, i) => Math.abs((actual[i] ?? -999) - v) <= tolerance);
}

export function assertColor(
  pixels: Pixels,
  x: number,
  y: number,
  expected: number[],
  label: string,
  tolerance = 8,
): void {
  const actual = pixels.at(x, y);
  assert.ok(
    near(actual, expected, tolerance),
    `${label}: pixel (${x},${y}) is ${actual.join(',')}, expected ${expected.join(',')}`,
  );
}

/** Asserts that `promise` rejects with an AppError of `code` (and a message matching `message`). */
export async function rejectsWith(
  promise: Promise<unknown>,
  code: ErrorCode,
  message?: RegExp,
): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected AppError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `expected ${code}, got ${err.code}: ${err.message}`);
    if (message) assert.match(err.message, message);
    return err;
  }
  assert.fail(`expected AppError ${code}, but it resolved`);
}

/** A solid-colour PNG of the given size. */
export function solidPng(width: number, height: number, rgb: [number, number, number]): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height; i++) {
    png.data[i * 4] = rgb[0];
    png.data[i * 4 + 1] = rgb[1];
    png.data[i * 4 + 2] = rgb[2];
    png.data[i * 4 + 3] = 255;
  }
  return PNG.sync.write(png);
}

/**
 * A Chromium that cannot start: a script in `dir` that writes `message` to stderr and exits 42
 * at once, until the file `flag` exists; then it runs the real Chromium. Its path, for
 * CHROME_PATH.
 */
export function chromiumFailingUntil(dir: string, flag: string, message: string): string {
  const real = findChromium();
  assert.ok(real, 'Chromium is installed');
  const script = join(dir, 'chromium');
  writeFileSync(
    script,
    [
      '#!/bin/sh',
      `if [ -e '${flag}' ]; then exec '${launchableBinary(real)}' "$@"; fi`,
      `echo "${message}" >&2`,
      'exit 42',
      '',
    ].join('\n'),
  );
  chmodSync(script, 0o755);
  return script;
}
