/**
 * An in-memory renderer, for the domain tier (`npm run test:domain`) only: a stand-in for an
 * outside engine, Chromium, that this tier does not start. It opens no page and no connection
 * to the target; it exists so that the capture pipeline's own rules (cache, quota holds, key
 * re-checks, single flight, charging) can run against the real app in seconds. Whatever
 * happens inside a page is test:browser's and test:api's to check, against the real engine.
 *
 * What it keeps of the renderer's contract (src/domain/captures/renderer.ts, as
 * src/adapters/browser/pool/chromium-renderer.ts keeps it):
 * - `control.deadline`: a render still running then ends with 504 `render_timeout` naming the
 *   phase it was in (body `{phase, pending_requests}`), one already past it with phase `queue`;
 * - `control.signal`: an abort ends the render with the signal's reason, as the real renderer
 *   reports it; `close()` ends renders in flight with 503 `overloaded`;
 * - the image: a real PNG, JPEG or WebP (sharp, which the service already uses) of width x
 *   height at the device scale factor, in a colour taken from the URL with a band of the
 *   opposite colour (so it is not a blank image);
 * - `fail_on_http_error` against the target's status (502 `target_error`, the same message).
 *
 * What it leaves out: the options that act inside a page (waits, scripts, blocking, cookies,
 * headers, emulation) reach it and change nothing; PDF, `content`, `selector`, `clip` and
 * resized images are refused with a plain Error (a 500), so that a test needing them cannot
 * pass here by accident. No render slots and no fair share: every render runs at once.
 *
 * Tests script it per URL (the page's address as the pipeline passes it): the target's
 * status, warnings, a failure, a hang until the deadline, and holds that keep renders waiting
 * until released. It counts the renders it started, per URL, and those ended by their signal.
 */
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import type { LazyRenderer } from '../../src/adapters/browser/index.ts';
import type {
  RenderControl,
  RenderOptions,
  RenderPhase,
  RenderResult,
} from '../../src/domain/captures/renderer.ts';
import type { CaptureWarning } from '../../src/domain/captures/warnings.ts';
import { AppError } from '../../src/domain/errors.ts';
import { raceAbort } from '../../src/lib/abort.ts';

/** How the target at one URL behaves. */
export interface PageScript {
  /** The HTTP status the target answers (default 200): X-Target-Status, fail_on_http_error. */
  status?: number;
  /** The render ends with this error (an AppError as the real renderer throws, or any Error). */
  fail?: () => Error;
  /** The page never finishes: the render ends at its deadline, 504 in this phase. */
  hang?: RenderPhase;
  /** What the render reports as possibly wrong with the image (default none). */
  warnings?: CaptureWarning[];
}

/** A hold on one URL's renders: they wait (in phase `navigation`) until it is released. */
export interface RenderHold {
  /** Resolves once a render of the URL waits on the hold. */
  readonly reached: Promise<void>;
  /** Renders waiting on it now. */
  readonly waiting: number;
  /** Lets the waiting renders go on; later renders of the URL do not wait. */
  release(): void;
}

export class MemoryRenderer implements LazyRenderer {
  readonly #scripts = new Map<string, PageScript>();
  readonly #holds = new Map<string, Gate>();
  readonly #perUrl = new Map<string, number>();
  readonly #running = new Set<AbortController>();
  #renders = 0;
  #captures = 0;
  #aborted = 0;
  #closed = false;
  #warmed = false;

  /** Renders started: each time the pipeline called `render`, whatever came of it. */
  get renders(): number {
    return this.#renders;
  }

  /** Renders started for this URL. */
  rendersOf(url: string): number {
    return this.#perUrl.get(address(url)) ?? 0;
  }

  /** Renders ended by their signal (every caller gone: a key revoked, a shutdown). */
  get aborted(): number {
    return this.#aborted;
  }

  /** How the target at `url` behaves from now on (replacing its earlier script). */
  script(url: string, script: PageScript): void {
    this.#scripts.set(address(url), script);
  }

  /** Holds the renders of `url` until released (one hold per URL at a time). */
  hold(url: string): RenderHold {
    const key = address(url);
    if (this.#holds.has(key)) throw new Error(`${url} is already held`);
    const gate = new Gate(() => this.#holds.delete(key));
    this.#holds.set(key, gate);
    return gate;
  }

  async render(options: RenderOptions, control: RenderControl): Promise<RenderResult> {
    if (this.#closed) throw shuttingDown();
    this.#warmed = true;
    const started = Date.now();
    // The real renderer's slot queue: a signal already aborted, or a deadline already past.
    control.signal?.throwIfAborted();
    if (control.deadline <= started) throw timeoutError('queue');
    const url = address(options.url);
    this.#renders++;
    this.#perUrl.set(url, (this.#perUrl.get(url) ?? 0) + 1);
    refuseUnmodelled(options);
    const script = this.#scripts.get(url) ?? {};

    let phase: RenderPhase = 'browser';
    const controller = new AbortController();
    const timer = setTimeout(
      () => controller.abort(timeoutError(phase)),
      Math.max(0, control.deadline - started),
    );
    const onAbort = (): void => controller.abort(control.signal?.reason);
    control.signal?.addEventListener('abort', onAbort, { once: true });
    if (control.signal?.aborted) onAbort();
    this.#running.add(controller);
    try {
      phase = 'navigation';
      const gate = this.#holds.get(url);
      if (gate) await gate.pass(controller.signal);
      if (script.hang) {
        phase = script.hang;
        await raceAbort(new Promise<never>(() => {}), controller.signal);
      }
      if (script.fail) throw script.fail();
      const status = script.status ?? 200;
      if (options.failOnHttpError && status >= 400) {
        throw new AppError(
          'target_error',
          `the target answered HTTP ${status} (fail_on_http_error is set)`,
        );
      }
      phase = 'capture';
      const drawn = await raceAbort(draw(options, url), controller.signal);
      this.#captures++;
      return {
        ...drawn,
        truncated: false,
        warnings: script.warnings ?? [],
        targetStatus: status,
        metadata: options.metadata
          ? {
              title: null,
              description: null,
              final_url: options.url,
              http_status: status,
              og: { title: null, description: null, image: null },
              icon_url: null,
            }
          : null,
        content: {},
        renderMs: Math.max(1, Date.now() - started),
        settleMs: 0,
      };
    } catch (err) {
      if (!controller.signal.aborted) throw err;
      if (control.signal?.aborted) this.#aborted++;
      throw controller.signal.reason;
    } finally {
      clearTimeout(timer);
      control.signal?.removeEventListener('abort', onAbort);
      this.#running.delete(controller);
    }
  }

  stats(): { inUse: number; queued: number; restarts: number; captures: number } {
    return { inUse: this.#running.size, queued: 0, restarts: 0, captures: this.#captures };
  }

  ready(): boolean {
    return !this.#closed;
  }

  started(): boolean {
    return this.#warmed;
  }

  async warm(): Promise<MemoryRenderer> {
    if (this.#closed) throw shuttingDown();
    this.#warmed = true;
    return this;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const running of this.#running) running.abort(shuttingDown());
  }
}

class Gate implements RenderHold {
  readonly #reached = Promise.withResolvers<void>();
  readonly #opened = Promise.withResolvers<void>();
  readonly #remove: () => void;
  #waiting = 0;

  constructor(remove: () => void) {
    this.#remove = remove;
  }

  get reached(): Promise<void> {
    return this.#reached.promise;
  }

  get waiting(): number {
    return this.#waiting;
  }

  release(): void {
    this.#remove();
    this.#opened.resolve();
  }

  async pass(signal: AbortSignal): Promise<void> {
    this.#waiting++;
    this.#reached.resolve();
    try {
      await raceAbort(this.#opened.promise, signal);
    } finally {
      this.#waiting--;
    }
  }
}

/** The URL as one key, however it was written (`new URL` normalises it as the pipeline does). */
function address(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

function refuseUnmodelled(o: RenderOptions): void {
  const unmodelled = [
    o.format === 'pdf' && 'format pdf',
    o.content.length > 0 && 'content',
    o.selector !== null && 'selector',
    o.clip !== null && 'clip',
    (o.imageWidth !== null || o.imageHeight !== null) && 'image_width/image_height',
  ].filter((name): name is string => typeof name === 'string');
  if (unmodelled.length > 0) {
    throw new Error(
      `the in-memory renderer does not model ${unmodelled.join(', ')}: test it in test:browser`,
    );
  }
}

/** A real image of the viewport at the scale: the URL's colour, a band of its opposite. */
async function draw(
  o: RenderOptions,
  url: string,
): Promise<Pick<RenderResult, 'image' | 'format' | 'width' | 'height'>> {
  const width = Math.max(1, Math.round(o.width * o.deviceScaleFactor));
  const height = Math.max(1, Math.round(o.height * o.deviceScaleFactor));
  const [r = 0, g = 0, b = 0] = createHash('sha256').update(url).digest();
  const pixels = Buffer.alloc(width * height * 3);
  const band = Math.max(1, Math.floor(height / 4));
  for (let y = 0; y < height; y++) {
    const [pr, pg, pb] = y < band ? [255 - r, 255 - g, 255 - b] : [r, g, b];
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      pixels[i] = pr;
      pixels[i + 1] = pg;
      pixels[i + 2] = pb;
    }
  }
  const raw = sharp(pixels, { raw: { width, height, channels: 3 } });
  const format = o.format === 'pdf' ? 'png' : o.format;
  const encoded =
    format === 'png'
      ? raw.png()
      : format === 'jpeg'
        ? raw.jpeg({ quality: o.quality })
        : raw.webp({ quality: o.quality });
  return { image: await encoded.toBuffer(), format, width, height };
}

/** What the real renderer says it was doing in each phase (page/capture-run.ts). */
const DOING: Record<RenderPhase, string> = {
  queue: 'waiting for a free browser slot',
  browser: 'preparing the page',
  navigation: 'loading the page',
  load: 'loading the page',
  network: 'loading the page',
  selector: 'waiting for the selector',
  delay: 'waiting out the delay',
  actions: 'running the page actions',
  settle: 'waiting for the page to come to rest',
  capture: 'preparing the capture',
};

/** The real renderer's 504 (page/capture-run.ts, pool/slot-queue.ts), nothing loading. */
function timeoutError(phase: RenderPhase): AppError {
  const doing = DOING[phase];
  return new AppError('render_timeout', `render timed out while ${doing} (phase: ${phase})`, {
    body: { phase, pending_requests: [] },
  });
}

const shuttingDown = (): AppError => new AppError('overloaded', 'the renderer is shutting down');
