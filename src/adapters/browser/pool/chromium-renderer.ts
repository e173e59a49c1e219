/**
 * The Chromium renderer, the Renderer port's implementation: at most `concurrency` captures at
 * once behind a bounded queue that shares the slots fairly among clients (slot-queue.ts), no
 * render that had to wait started with less deadline left than the node's typical render
 * (render-times.ts), one deadline per capture that includes its queue time. Each capture
 * takes a clean page from the pool (page-pool.ts) and gives it back; the pages are made on the
 * browser the supervisor keeps running (browser-supervisor.ts). Captures in flight on a
 * browser that goes away, and captures that arrive while no browser can be had, fail with 503
 * `overloaded` and a Retry-After, never 500, and ready() is false.
 */
import { join } from 'node:path';
import type { RenderSettings } from '../../../config/config.ts';
import { BOUNDS } from '../../../domain/bounds.ts';
import type {
  RenderControl,
  Renderer,
  RenderOptions,
  RenderResult,
} from '../../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../../domain/errors.ts';
import { noop, raceAbort } from '../../../lib/abort.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { Lane, ProxyRoute } from '../../egress/proxy.ts';
import type { ProxyRoutes } from '../../egress/proxy-routes.ts';
import type { CapturePage, CaptureSettings } from '../page/capture-page.ts';
import { NETWORK_QUIET_CAP_MS, startTimeout } from '../page/capture-run.ts';
import { createFilterLists } from '../page/network/filter-lists.ts';
import { NAVIGATED } from '../page/steps/option-steps.ts';
import type { BrowserInstance } from '../process/browser-instance.ts';
import { OVERSIZED_ANSWER } from '../process/cdp-pipe.ts';
import { findChromium, launchableBinary } from '../process/find-chromium.ts';
import { BrowserSupervisor } from './browser-supervisor.ts';
import { type PageLane, PagePool, pageClient } from './page-pool.ts';
import { RenderTimes } from './render-times.ts';
import { MAX_TIMER_MS, SlotQueue } from './slot-queue.ts';

/**
 * The render settings the pool and its pages use, as the config parses them (the render
 * section, config/config.ts): their defaults are the config's.
 */
export type ChromiumRenderSettings = Pick<
  RenderSettings,
  | 'chromePath'
  | 'concurrency'
  | 'queueSize'
  | 'maxPageHeight'
  | 'maxImagePixels'
  | 'rendererMaxMemoryBytes'
  | 'settleMaxMs'
  | 'maxMessageBytes'
>;

/**
 * What no setting reaches: how the pool recycles, replaces and shrinks, and the cap of the wait
 * for a quiet network. Tests change it.
 */
export interface RendererTuning {
  /** The settle wait's cap on the network's quiet, in ms; tests raise it. */
  networkQuietCapMs: number;
  /** Captures per context before it is replaced (a second line behind the per-capture reset). */
  recycleAfter: number;
  /** Captures per browser before it is replaced. */
  browserRecycleAfter: number;
  /**
   * Resident memory of the browser's processes above which it is replaced. Measured as the
   * sum of RssAnon (each process's own resident heap): a plain VmRSS sum counts the ~100 MB of
   * shared Chromium binary once per process (about 1.5 GB for an idle 2-slot browser, against
   * ~0.4 GB of RssAnon), so it says more about the process count than about growth.
   */
  maxBrowserRssBytes: number;
  /**
   * Pages (isolated contexts) per slot. 2: a page is reset while the slot renders on another.
   * 1: the reset is on the slot's critical path (less memory, lower throughput).
   */
  pagesPerSlot: number;
  /**
   * After this long without a capture, the pool shrinks to one page and Chromium is asked to
   * free what it can (docs/deployment.md, "Memory").
   */
  idleShrinkMs: number;
}

export const RENDERER_TUNING: RendererTuning = {
  networkQuietCapMs: NETWORK_QUIET_CAP_MS,
  recycleAfter: 50,
  browserRecycleAfter: 2_000,
  maxBrowserRssBytes: 2 * 1024 ** 3,
  pagesPerSlot: 2,
  idleShrinkMs: 5_000,
};

/** The client of captures that name none (tests, benchmarks). */
const ANONYMOUS_CLIENT = '';

export interface ChromiumRendererOptions {
  /** The config's render section (or the part of it the renderer reads). */
  render: ChromiumRenderSettings;
  /** Profiles and temp files go under `<dataDir>/chromium/`. */
  dataDir: string;
  logger: Logger;
  /** Egress proxy every connection of the page goes through (loopback included). */
  proxyUrl?: string;
  /**
   * The egress proxy's lanes, for captures through an upstream proxy (docs/proxies.md): the
   * routes of the captures' choices, and a lane opened for a new context. None: such a
   * capture is a 502 `proxy_error`.
   */
  lanes?: { routes: ProxyRoutes; open(route: ProxyRoute): Promise<Lane> };
  /** Called for each main-frame document request, redirects included; throws to refuse. */
  checkNavigation?: CaptureSettings['checkNavigation'];
  /** Changes to RENDERER_TUNING (tests). */
  tuning?: Partial<RendererTuning>;
}

interface Running {
  controller: AbortController;
  /** The page it renders on; null while it is being taken or created. */
  page: CapturePage | null;
}

export class ChromiumRenderer implements Renderer {
  readonly #logger: Logger;
  readonly #concurrency: number;
  /** Capacity: one token per capture allowed to run. */
  readonly #queue: SlotQueue<number>;
  /** Recent successful renders: no render starts with less deadline left than they take. */
  readonly #renderTimes = new RenderTimes({
    size: BOUNDS.admission.renderTimeSamples,
    minSamples: BOUNDS.admission.minRenderTimeSamples,
  });
  readonly #running = new Set<Running>();
  readonly #browsers: BrowserSupervisor;
  readonly #pool: PagePool;
  readonly #lanes: ChromiumRendererOptions['lanes'];
  #captures = 0;
  #closing: Promise<void> | null = null;
  /** Aborted by close(): ends waits for pages and relaunch backoffs. */
  readonly #closed = new AbortController();

  constructor(executablePath: string, options: ChromiumRendererOptions) {
    const { render, logger } = options;
    const tuning: RendererTuning = { ...RENDERER_TUNING, ...options.tuning };
    this.#logger = logger;
    this.#lanes = options.lanes;
    const settings: CaptureSettings = {
      render,
      logger,
      ...(options.checkNavigation ? { checkNavigation: options.checkNavigation } : {}),
      networkQuietCapMs: tuning.networkQuietCapMs,
      filterLists: createFilterLists({
        cacheDir: join(options.dataDir, 'cache', 'filter-lists'),
        logger,
      }),
    };
    this.#concurrency = Math.max(1, render.concurrency);
    this.#browsers = new BrowserSupervisor(
      {
        executablePath,
        dataDir: options.dataDir,
        ...(options.proxyUrl ? { proxyUrl: options.proxyUrl } : {}),
        maxMessageBytes: render.maxMessageBytes,
        browserRecycleAfter: Math.max(1, tuning.browserRecycleAfter),
        maxBrowserRssBytes: tuning.maxBrowserRssBytes,
        closed: this.#closed.signal,
        logger,
      },
      {
        lost: (instance, reason) => this.#lost(instance, reason),
        replaced: () => this.#pool.dropStale(),
        fill: () => this.#pool.prepareSpares(),
      },
    );
    this.#pool = new PagePool({
      settings,
      concurrency: this.#concurrency,
      pagesPerSlot: Math.max(1, tuning.pagesPerSlot),
      recycleAfter: Math.max(1, tuning.recycleAfter),
      idleShrinkMs: Math.max(0, tuning.idleShrinkMs),
      browsers: this.#browsers,
      closed: this.#closed.signal,
      captures: { rendering: () => this.#running.size, waiting: () => this.#queue.queued },
      logger,
    });
    this.#queue = new SlotQueue<number>({
      maxQueued: Math.max(0, render.queueSize),
      minStartMs: () => this.#renderTimes.typical(),
    });
  }

  /**
   * Launches the browser and prepares its first page. A browser that cannot start does not
   * fail start(): the relaunch loop keeps trying in the background, and captures meanwhile
   * answer 503 (ready() is false).
   */
  async start(): Promise<void> {
    await this.#browsers.start();
    try {
      await this.#pool.prepareFirstPage();
    } catch (err) {
      await this.close();
      throw err;
    }
    for (let token = 0; token < this.#concurrency; token++) this.#queue.release(token);
    this.#pool.scheduleShrink();
  }

  async render(options: RenderOptions, control: RenderControl): Promise<RenderResult> {
    if (this.#closing) throw new AppError('overloaded', 'the renderer is shutting down');
    const client = control.client ?? {
      id: ANONYMOUS_CLIENT,
      maxConcurrent: Number.POSITIVE_INFINITY,
    };
    const token = await this.#queue.acquire(control.deadline, control.signal, client);
    const started = Date.now();
    const controller = new AbortController();
    const running: Running = { controller, page: null };
    this.#running.add(running);
    // Capped at Node's longest timer: a longer delay would fire at once (a deadline more than
    // 24.8 days ahead, which only a clock moved forward in a test gives).
    const timer = setTimeout(
      () => controller.abort(running.page?.timeoutError() ?? startTimeout('starting the browser')),
      Math.min(MAX_TIMER_MS, Math.max(0, control.deadline - started)),
    );
    const onAbort = (): void => controller.abort(control.signal?.reason);
    control.signal?.addEventListener('abort', onAbort, { once: true });
    if (control.signal?.aborted) onAbort();

    // A capture through a proxy runs in a context of that route's, this client's only.
    let lane: PageLane | null = null;
    const taking = (async () => {
      lane = this.#laneFor(options);
      return this.#pool.take(controller.signal, client.id, lane);
    })();
    let ok = false;
    try {
      running.page = await raceAbort(taking, controller.signal);
      const output = await running.page.capture(
        options,
        controller.signal,
        pageClient(client.id, lane),
      );
      ok = true;
      this.#captures++;
      running.page.instance.captures++;
      const renderMs = Date.now() - started;
      this.#renderTimes.add(renderMs);
      return { ...output, renderMs };
    } catch (err) {
      throw this.#classify(err, controller.signal, running.page);
    } finally {
      clearTimeout(timer);
      control.signal?.removeEventListener('abort', onAbort);
      this.#running.delete(running);
      this.#queue.release(token);
      if (running.page) {
        void this.#pool.giveBack(running.page, ok, true);
      } else {
        // Aborted while taking a page: a page that still arrives was never used.
        taking.then((late) => this.#pool.giveBack(late, true, false)).catch(noop);
      }
    }
  }

  /** The lane of a capture through a proxy; null: straight out through the egress proxy. */
  #laneFor(options: RenderOptions): PageLane | null {
    if (options.proxy === null) return null;
    const lanes = this.#lanes;
    if (lanes === undefined) {
      throw new AppError('proxy_error', 'this renderer sends no capture through a proxy');
    }
    const { route, key } = lanes.routes.routeFor(options.proxy);
    return { key, open: () => lanes.open(route) };
  }

  stats(): { inUse: number; queued: number; restarts: number; captures: number } {
    return {
      inUse: this.#concurrency - this.#queue.idle,
      queued: this.#queue.queued,
      restarts: this.#browsers.restarts,
      captures: this.#captures,
    };
  }

  /** Pages (each in its own context) alive or being made, on any browser. */
  get pages(): number {
    return this.#pool.size;
  }

  ready(): boolean {
    const current = this.#browsers.current;
    return this.#closing === null && current !== null && current.connected;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const shuttingDown = new AppError('overloaded', 'the renderer is shutting down');
    this.#closed.abort(shuttingDown);
    this.#queue.rejectAll(shuttingDown);
    for (const running of this.#running) running.controller.abort(shuttingDown);
    await this.#browsers.launchesEnded();
    this.#pool.clear();
    // Closing the browsers closes every page with them.
    await this.#browsers.retireAll();
  }

  /** A browser went away: its captures end with the 503, its idle pages close. */
  #lost(instance: BrowserInstance, reason: AppError): void {
    for (const running of this.#running) {
      const page = running.page;
      if (page?.instance === instance || (page === null && !instance.draining)) {
        running.controller.abort(reason);
      }
    }
    this.#pool.dropIdleOn(instance);
  }

  #classify(err: unknown, signal: AbortSignal, page: CapturePage | null): unknown {
    if (signal.aborted) return signal.reason;
    if (isAppError(err)) return err;
    // The browser went away under this capture (or before it had a page): not the capture's
    // fault, and not a 500 (docs/security.md, "No browser, no 500").
    const browserGone = page
      ? !page.instance.browser.connected
      : !(this.#browsers.current?.connected ?? false);
    if (browserGone) return this.#browsers.unavailable('the browser crashed; it is restarting');
    // No page yet: the browser failed to give one (wedged, being replaced), not the target.
    if (page === null) {
      this.#logger.warn({ err: String(err) }, 'no page for a capture');
      return this.#browsers.unavailable('the browser is not answering; it is being replaced');
    }
    // The page replaced its own document while a capture step ran in it (a script reload,
    // a meta refresh, a consent manager reloading after opt-out): the target's doing.
    if (err instanceof Error && NAVIGATED.test(err.message)) {
      return new AppError(
        'target_error',
        'the page navigated away while it was being captured (a reload or redirect by the page itself)',
      );
    }
    // An answer over the protocol bound (process/cdp-pipe.ts) fails its own step alone.
    if (err instanceof Error && err.message.includes(OVERSIZED_ANSWER)) {
      return new AppError(
        'target_error',
        'the page made the browser answer with more data than the service reads',
      );
    }
    this.#logger.error({ err: String(err) }, 'render failed unexpectedly');
    return new AppError('internal_error', 'render failed', { cause: err });
  }
}

/**
 * Starts the browser and prepares its first page (the others follow in the background);
 * rejects (leaving nothing running) when Chromium cannot be found or started.
 */
export async function createChromiumRenderer(
  options: ChromiumRendererOptions,
): Promise<ChromiumRenderer> {
  const { chromePath } = options.render;
  const found = findChromium(chromePath);
  if (found === null) {
    throw new Error(
      chromePath
        ? `Chromium not found at ${chromePath}`
        : 'Chromium not found: set CHROME_PATH or install chromium',
    );
  }
  const renderer = new ChromiumRenderer(launchableBinary(found), options);
  await renderer.start();
  return renderer;
}
