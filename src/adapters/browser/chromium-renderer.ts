/**
 * The Chromium renderer: one long-lived browser, at most `concurrency` captures at once behind a
 * bounded queue that shares the slots fairly among clients (slot-queue.ts), one deadline per
 * capture that includes its queue time.
 *
 * Captures run on reused pages, each in its own isolated browser context (capture-page.ts).
 * After a capture its page is reset (blank page, storage wiped) in the background while the
 * capture's slot already serves the next request on another clean page: the pool holds two
 * pages per slot (and the spares), so the reset is off the critical path.
 *
 * A context keeps what no reset clears (HTTP authentication cache, HSTS and alt-svc state,
 * open sockets), so a page that rendered for one client only ever renders for that client
 * again (docs/security.md, "Isolation"). Another client's capture takes a never-used
 * spare; a few spares are kept ready off the critical path, replacing the least recently used
 * pages of other clients when the pool is full.
 *
 * The browser is replaced (the new one launched before the old one closes) after
 * `browserRecycleAfter` captures or when its processes' resident memory passes
 * `maxBrowserRssBytes`. When it cannot start, crashes or disconnects, it is relaunched with
 * backoff in the background (docs/security.md): captures in flight on it and captures
 * that arrive while no browser can be had fail with 503 `overloaded` and a Retry-After, never
 * 500, ready() is false, and the log gets Chromium's exit and the last lines of its stderr.
 */
import { join } from 'node:path';
import { ProtocolError } from 'puppeteer-core';

import { BOUNDS } from '../../domain/bounds.ts';
import type {
  RenderControl,
  Renderer,
  RenderOptions,
  RenderResult,
} from '../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { raceAbort, sleep } from './abort.ts';
import { BrowserInstance, ChromiumLaunchError, sweepStaleProfiles } from './browser-instance.ts';
import type { CaptureSettings } from './capture-page.ts';
import { CapturePage } from './capture-page.ts';
import { createFilterLists } from './filter-lists.ts';
import { findChromium, launchableBinary } from './find-chromium.ts';
import { NAVIGATED } from './option-steps.ts';
import { RenderTimes } from './render-times.ts';
import { SlotQueue } from './slot-queue.ts';

export const DEFAULT_MAX_PAGE_HEIGHT = 16_384;
/** 64 megapixels (SI: 64 million). */
export const DEFAULT_MAX_IMAGE_PIXELS = 64_000_000;
/** Resident memory of one renderer above which it is killed. */
export const DEFAULT_RENDERER_MAX_MEMORY_BYTES = 2 * 1024 ** 3;
/** Captures per context before it is replaced (a second line behind the per-capture reset). */
export const DEFAULT_RECYCLE_AFTER = 50;
/** Captures per browser before it is replaced. */
export const DEFAULT_BROWSER_RECYCLE_AFTER = 2_000;
/**
 * Resident memory of the browser's processes above which it is replaced. Measured as the sum
 * of RssAnon (each process's own resident heap): a plain VmRSS sum counts the ~100 MB of shared
 * Chromium binary once per process (about 1.5 GB for an idle 2-slot browser, against ~0.4 GB of
 * RssAnon), so it says more about the process count than about growth.
 */
export const DEFAULT_MAX_BROWSER_RSS_BYTES = 2 * 1024 ** 3;
/** How often (at most) the browser's memory is measured, after a capture. */
const USAGE_CHECK_INTERVAL_MS = 5_000;
/**
 * A replaced browser is closed once its last capture is done; this is only the backstop for
 * a capture that somehow outlives its deadline.
 */
const DRAIN_TIMEOUT_MS = 600_000;
/** Relaunch attempts after a failed launch back off from this, doubling... */
const MIN_RELAUNCH_BACKOFF_MS = 500;
/** ...up to this. */
const MAX_RELAUNCH_BACKOFF_MS = 10_000;
/** What a launch usually takes, for Retry-After. */
const RELAUNCH_ESTIMATE_MS = 2_000;
/** How long the exit of a crashed browser is awaited for the log line. */
const CRASH_EXIT_WAIT_MS = 2_000;
/** Creating a context + page; past this the browser is considered stuck. */
const PAGE_CREATE_TIMEOUT_MS = 15_000;
/**
 * Longest wait for the client's own page while it is being reset, before another page is
 * taken (a reset takes tens of ms; this bounds a wedged one, whose own limit is 5 s).
 */
const OWN_PAGE_WAIT_MS = 500;
/**
 * After this long without a capture, the pool shrinks to one page and Chromium is
 * asked to free what it can (docs/deployment.md, "Memory").
 */
export const DEFAULT_IDLE_SHRINK_MS = 5_000;
/** Pages per slot by default: one capturing, one being reset. */
export const DEFAULT_PAGES_PER_SLOT = 2;
/** The client of captures that name none (tests, benchmarks). */
const ANONYMOUS_CLIENT = '';

export interface ChromiumRendererOptions {
  /** Chromium binary; default findChromium() (CHROME_PATH, then the usual install paths). */
  executablePath?: string;
  /** Profiles and temp files go under `<dataDir>/chromium/`. */
  dataDir: string;
  /** Captures rendered at once. */
  concurrency: number;
  /** Captures allowed to wait for a slot; more get AppError overloaded. */
  queueSize: number;
  /** Egress proxy every connection of the page goes through (loopback included). */
  proxyUrl?: string;
  /** Called for each main-frame document request, redirects included; throws to refuse. */
  checkNavigation?: (url: URL) => Promise<void>;
  /** Device px; full-page images are cut there. Default 16384. */
  maxPageHeight?: number;
  /** The settle wait's cap, in ms (default NETWORK_QUIET_CAP_MS); tests raise it. */
  networkQuietCapMs?: number;
  /** width x height (device px) of any image; the height is cut to fit. Default 64,000,000. */
  maxImagePixels?: number;
  /** Resident memory one renderer may hold before it is killed. 2 GiB. */
  rendererMaxMemoryBytes?: number;
  /** Largest CDP message read from Chromium (BOUNDS.browser.maxProtocolMessageBytes). */
  maxMessageBytes?: number;
  /** Captures per context before it is replaced. Default 50. */
  recycleAfter?: number;
  /** Captures per browser before it is replaced. Default 2000. */
  browserRecycleAfter?: number;
  /** Resident (anonymous) memory of the browser's tree above which it is replaced. 2 GiB. */
  maxBrowserRssBytes?: number;
  /**
   * Pages (isolated contexts) per slot. 2 (default): a page is reset while the slot renders on
   * another. 1: the reset is on the slot's critical path (less memory, lower throughput).
   */
  pagesPerSlot?: number;
  /** Idle time after which the pool shrinks to one page. Default 5 s. */
  idleShrinkMs?: number;
  logger?: Logger;
}

interface Running {
  controller: AbortController;
  /** The page it renders on; null while it is being taken or created. */
  page: CapturePage | null;
}

export class ChromiumRenderer implements Renderer {
  readonly #executablePath: string;
  readonly #options: ChromiumRendererOptions;
  readonly #logger: Logger | undefined;
  readonly #settings: CaptureSettings;
  readonly #concurrency: number;
  readonly #maxPages: number;
  readonly #recycleAfter: number;
  readonly #browserRecycleAfter: number;
  readonly #maxRss: number;
  readonly #idleShrinkMs: number;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Pages being reset or replaced after a capture (#giveBack in progress). */
  #givingBack = 0;
  /** Pages being reset after a capture, for the client they serve (#giveBack in progress). */
  readonly #resetting = new Set<CapturePage>();
  /** Capacity: one token per capture allowed to run. */
  readonly #queue: SlotQueue<number>;
  /** Recent successful renders: no render starts with less deadline left than they take. */
  readonly #renderTimes = new RenderTimes({
    size: BOUNDS.admission.renderTimeSamples,
    minSamples: BOUNDS.admission.minRenderTimeSamples,
  });
  /**
   * Clean pages, ready for a capture, least recently idle first: never used (`client` null,
   * for anyone) or reset after a capture (only for the same client).
   */
  readonly #idle: CapturePage[] = [];
  /** Never-used pages kept idle for clients without a page of their own. */
  readonly #spares: number;
  /** Spares being created by #prepareSpares. */
  #creatingSpares = 0;
  /** Pages alive or being created, on any browser. */
  #pages = 0;
  /** Woken when a page becomes idle or the page count drops. */
  readonly #pageWaiters = new Set<() => void>();
  readonly #running = new Set<Running>();
  readonly #instances = new Set<BrowserInstance>();
  #current: BrowserInstance | null = null;
  /** The relaunch loop, while it runs: resolves with the browser that finally started. */
  #launching: Promise<BrowserInstance | null> | null = null;
  /** The launch attempt in progress, if any. */
  #attempt: Promise<BrowserInstance> | null = null;
  /** Set while the last launch attempt failed; cleared by a successful one. */
  #launchError: unknown = null;
  /** When the relaunch loop tries next (epoch ms), while it waits. */
  #nextAttemptAt = 0;
  #recycling = false;
  #lastUsageCheck = 0;
  #restarts = 0;
  #captures = 0;
  #closing: Promise<void> | null = null;
  /** Aborted by close(): ends waits for pages and relaunch backoffs. */
  readonly #closed = new AbortController();

  constructor(executablePath: string, options: ChromiumRendererOptions) {
    this.#executablePath = executablePath;
    this.#options = options;
    this.#logger = options.logger;
    this.#settings = {
      maxPageHeight: options.maxPageHeight ?? DEFAULT_MAX_PAGE_HEIGHT,
      maxImagePixels: options.maxImagePixels ?? DEFAULT_MAX_IMAGE_PIXELS,
      rendererMaxMemoryBytes: options.rendererMaxMemoryBytes ?? DEFAULT_RENDERER_MAX_MEMORY_BYTES,
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.checkNavigation ? { checkNavigation: options.checkNavigation } : {}),
      ...(options.networkQuietCapMs ? { networkQuietCapMs: options.networkQuietCapMs } : {}),
      filterLists: createFilterLists({
        cacheDir: join(options.dataDir, 'cache', 'filter-lists'),
        ...(options.logger ? { logger: options.logger } : {}),
      }),
    };
    this.#concurrency = Math.max(1, options.concurrency);
    const pagesPerSlot = Math.max(1, options.pagesPerSlot ?? DEFAULT_PAGES_PER_SLOT);
    // Half the slots, at least one, on top of the slots' own pages: a client using every slot
    // keeps a page capturing and one being reset per slot, so it does not take a spare (which
    // another spare then replaces, a new context per capture) whenever a reset is still under
    // way. With one page per slot (the low-memory setting) there are none, and another
    // client's capture replaces a used page on its critical path.
    this.#spares = pagesPerSlot > 1 ? Math.max(1, Math.floor(this.#concurrency / 2)) : 0;
    this.#maxPages = this.#concurrency * pagesPerSlot + this.#spares;
    this.#recycleAfter = Math.max(1, options.recycleAfter ?? DEFAULT_RECYCLE_AFTER);
    this.#browserRecycleAfter = Math.max(
      1,
      options.browserRecycleAfter ?? DEFAULT_BROWSER_RECYCLE_AFTER,
    );
    this.#maxRss = options.maxBrowserRssBytes ?? DEFAULT_MAX_BROWSER_RSS_BYTES;
    this.#idleShrinkMs = Math.max(0, options.idleShrinkMs ?? DEFAULT_IDLE_SHRINK_MS);
    this.#queue = new SlotQueue<number>({
      maxQueued: Math.max(0, options.queueSize),
      minStartMs: () => this.#renderTimes.typical(),
    });
  }

  /**
   * Launches the browser and prepares its pages. A browser that cannot start does not fail
   * start(): the relaunch loop keeps trying in the background, and captures meanwhile answer
   * 503 (ready() is false).
   */
  async start(): Promise<void> {
    await sweepStaleProfiles(this.#options.dataDir, this.#logger);
    const attempt = this.#launch();
    this.#attempt = attempt;
    try {
      this.#current = await attempt;
    } catch (err) {
      this.#launchFailed(err);
      void this.#relaunch(1);
    } finally {
      this.#attempt = null;
    }
    try {
      await this.#prepareFirstPage();
    } catch (err) {
      await this.close();
      throw err;
    }
    for (let token = 0; token < this.#concurrency; token++) this.#queue.release(token);
    this.#scheduleIdleShrink();
  }

  /**
   * At start, one page is made before the renderer counts as started (the first capture finds
   * it ready); the others follow in the background, off the first capture's path
   * (docs/deployment.md, "Start-up").
   */
  async #prepareFirstPage(): Promise<void> {
    const current = this.#current;
    if (current?.connected) await this.#createSpare(current);
    void this.#prepareSpares().catch((err: unknown) => {
      if (!this.#closing) this.#logger?.warn({ err: String(err) }, 'could not prepare a page');
    });
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
    const timer = setTimeout(
      () =>
        controller.abort(
          new AppError(
            'render_timeout',
            `render timed out while ${running.page?.phase ?? 'starting the browser'}`,
          ),
        ),
      Math.max(0, control.deadline - started),
    );
    const onAbort = (): void => controller.abort(control.signal?.reason);
    control.signal?.addEventListener('abort', onAbort, { once: true });
    if (control.signal?.aborted) onAbort();

    const taking = this.#takePage(controller.signal, client.id);
    let ok = false;
    try {
      running.page = await raceAbort(taking, controller.signal);
      const output = await running.page.capture(options, controller.signal, client.id);
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
        void this.#giveBack(running.page, ok, true);
      } else {
        // Aborted while taking a page: a page that still arrives was never used.
        taking.then((late) => this.#giveBack(late, true, false)).catch(() => {});
      }
    }
  }

  stats(): { inUse: number; queued: number; restarts: number; captures: number } {
    return {
      inUse: this.#concurrency - this.#queue.idle,
      queued: this.#queue.queued,
      restarts: this.#restarts,
      captures: this.#captures,
    };
  }

  /** Pages (each in its own context) alive or being made, on any browser. */
  get pages(): number {
    return this.#pages;
  }

  ready(): boolean {
    return this.#closing === null && this.#current !== null && this.#current.connected;
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    const shuttingDown = new AppError('overloaded', 'the renderer is shutting down');
    clearTimeout(this.#idleTimer);
    this.#closed.abort(shuttingDown);
    this.#queue.rejectAll(shuttingDown);
    for (const running of this.#running) running.controller.abort(shuttingDown);
    await this.#launching?.catch(() => null);
    this.#current = null;
    this.#idle.length = 0;
    // Closing the browsers closes every page with them.
    await Promise.all([...this.#instances].map((instance) => this.#retire(instance)));
  }

  /**
   * The 503 for a capture that finds no browser; Retry-After points past the next launch
   * attempt (a launch takes a second or two).
   */
  #unavailable(message: string): AppError {
    const wait = Math.max(0, this.#nextAttemptAt - Date.now()) + RELAUNCH_ESTIMATE_MS;
    const seconds = Math.min(30, Math.ceil(wait / 1000));
    return new AppError('overloaded', message, { headers: { 'Retry-After': String(seconds) } });
  }

  #launchFailed(err: unknown, extra: Record<string, unknown> = {}): void {
    this.#launchError = err;
    this.#logger?.error(
      {
        err: String(err instanceof ChromiumLaunchError ? err.cause : err),
        executablePath: this.#executablePath,
        ...(err instanceof ChromiumLaunchError ? err.report : {}),
        ...extra,
      },
      'chromium could not be started',
    );
  }

  async #launch(): Promise<BrowserInstance> {
    const instance = await BrowserInstance.launch({
      executablePath: this.#executablePath,
      dataDir: this.#options.dataDir,
      ...(this.#options.proxyUrl ? { proxyUrl: this.#options.proxyUrl } : {}),
      ...(this.#options.maxMessageBytes ? { maxMessageBytes: this.#options.maxMessageBytes } : {}),
      ...(this.#logger ? { logger: this.#logger } : {}),
    });
    this.#instances.add(instance);
    instance.browser.on('disconnected', () => this.#onDisconnected(instance));
    this.#logger?.info({ pid: instance.pid, browser: instance.id }, 'chromium started');
    return instance;
  }

  async #retire(instance: BrowserInstance): Promise<void> {
    this.#instances.delete(instance);
    if (this.#current === instance) this.#current = null;
    await instance.close();
  }

  /** A replaced browser is closed once no page of ours is left on it. */
  async #retireIfDrained(instance: BrowserInstance): Promise<void> {
    if (instance !== this.#current && instance.pages === 0 && this.#instances.has(instance)) {
      await this.#retire(instance);
    }
  }

  /**
   * The browser new captures go to. While a relaunch after a crash is under way, waits for that
   * attempt; once an attempt has failed (Chromium cannot start right now), refuses at once.
   */
  async #currentInstance(): Promise<BrowserInstance> {
    if (this.#closing) throw new AppError('overloaded', 'the renderer is shutting down');
    const current = this.#current;
    if (current?.connected) return current;
    if (this.#launchError !== null) {
      throw this.#unavailable('the browser is not available (restarting)');
    }
    if (this.#launching === null) void this.#relaunch();
    const attempt = this.#attempt;
    if (attempt === null) throw this.#unavailable('the browser is not available (restarting)');
    try {
      return await attempt;
    } catch {
      throw this.#unavailable('the browser is not available (restarting)');
    }
  }

  /** A new context + page, counted in #pages, bounded in time (a late one is closed). */
  async #createPage(instance: BrowserInstance): Promise<CapturePage> {
    this.#pages++;
    const creating = CapturePage.create(instance, this.#settings);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Error('creating a page timed out');
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeout), PAGE_CREATE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([creating, timedOut]);
    } catch (err) {
      this.#pages--;
      this.#wakePageWaiters();
      creating.then((late) => late.dispose()).catch(() => {});
      // A browser that is connected but does not answer (wedged) would fail every capture:
      // replace it.
      if ((err === timeout || err instanceof ProtocolError) && instance === this.#current) {
        this.#logger?.warn({ browser: instance.id, err: String(err) }, 'could not create a page');
        void this.#recycle('page creation failed');
      }
      await this.#retireIfDrained(instance);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A clean page on the current browser for `client`: its own idle page, a never-used spare, a
   * new page, a new page in place of another client's idle one, or the next one freed.
   */
  async #takePage(signal: AbortSignal, client: string): Promise<CapturePage> {
    // Waiting for the client's own page being reset ends here at the latest.
    const ownWaitEnd = performance.now() + OWN_PAGE_WAIT_MS;
    for (;;) {
      signal.throwIfAborted();
      const current = await this.#currentInstance();
      for (const page of this.#idle.filter((p) => p.instance !== current || !p.usable)) {
        void this.#discard(page);
      }
      const own = this.#idle.findLast((p) => p.client === client);
      // The client's page being reset is worth its wait (tens of ms): taking a spare instead
      // means a new context made to replace it, and a client capturing one page after another
      // would churn through contexts. A failed reset discards it and wakes us; a slow one (a
      // wedged renderer) is waited for OWN_PAGE_WAIT_MS at most.
      const waitForOwn =
        own === undefined &&
        current !== null &&
        performance.now() < ownWaitEnd &&
        [...this.#resetting].some((p) => p.client === client && p.instance === current);
      const page = own ?? (waitForOwn ? undefined : this.#idle.find((p) => p.client === null));
      if (page) {
        this.#idle.splice(this.#idle.indexOf(page), 1);
        return page;
      }
      if (waitForOwn) {
        await this.#nextPageEvent(signal, ownWaitEnd - performance.now());
        continue;
      }
      if (this.#pages < this.#maxPages) return this.#createPage(current);
      // Every idle page has served other clients: the longest idle makes room for a new one.
      const other = this.#idle[0];
      if (other) {
        void this.#discard(other);
        return this.#createPage(current);
      }
      await this.#nextPageEvent(signal);
    }
  }

  /**
   * Resolves when a page becomes idle or a place in the pool frees up, or after `timeoutMs`
   * when given.
   */
  #nextPageEvent(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.#pageWaiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
      };
      const wake = (): void => {
        done();
        resolve();
      };
      const onAbort = (): void => {
        done();
        reject(signal.reason);
      };
      this.#pageWaiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(wake, Math.max(0, timeoutMs));
    });
  }

  #wakePageWaiters(): void {
    for (const wake of [...this.#pageWaiters]) wake();
  }

  #makeIdle(page: CapturePage): void {
    this.#idle.push(page);
    this.#wakePageWaiters();
  }

  /** Closes a page for good (its context with it) and frees its place in the pool. */
  async #discard(page: CapturePage): Promise<void> {
    const index = this.#idle.indexOf(page);
    if (index !== -1) this.#idle.splice(index, 1);
    this.#pages--;
    this.#wakePageWaiters();
    const clean = await page.dispose();
    const instance = page.instance;
    if (!clean && instance.connected && instance === this.#current) {
      this.#logger?.warn(
        { browser: instance.id },
        'a browser context did not close; replacing the browser',
      );
      void this.#recycle('context close timed out');
    }
    await this.#retireIfDrained(instance);
  }

  /**
   * After a capture, off its critical path: reset the page for the next capture, or replace it
   * (failed capture, context due for recycling, page on a replaced browser).
   */
  async #giveBack(page: CapturePage, ok: boolean, used: boolean): Promise<void> {
    this.#givingBack++;
    try {
      const current = this.#current;
      let keep =
        ok &&
        !this.#closing &&
        page.usable &&
        page.instance === current &&
        current.connected &&
        page.captures < this.#recycleAfter;
      if (keep && used) {
        this.#resetting.add(page);
        try {
          await page.reset();
        } catch (err) {
          keep = false;
          if (!this.#closing) {
            this.#logger?.warn({ err: String(err) }, 'page reset failed; replacing the context');
          }
        }
      }
      // Made idle or discarded below, in the same turn: either wakes a client waiting for it.
      this.#resetting.delete(page);
      if (keep && !this.#closing && page.instance === this.#current) {
        this.#makeIdle(page);
      } else {
        await this.#discard(page);
      }
      if (this.#closing) return;
      this.#checkBrowserHealth();
      await this.#prepareSpares().catch((err: unknown) => {
        if (!this.#closing) this.#logger?.warn({ err: String(err) }, 'could not prepare a page');
      });
    } catch (err) {
      this.#logger?.error({ err: String(err) }, 'returning a page failed');
    } finally {
      this.#givingBack--;
    }
    this.#scheduleIdleShrink();
  }

  /** (Re)starts the idle countdown; called whenever a capture's page has been given back. */
  #scheduleIdleShrink(): void {
    clearTimeout(this.#idleTimer);
    if (this.#closing) return;
    this.#idleTimer = setTimeout(() => void this.#shrinkWhenIdle(), this.#idleShrinkMs);
    this.#idleTimer.unref();
  }

  /**
   * No capture for a while: keep one page (a never-used spare when there is one, which any
   * client may take, else the most recently used), close the others with their contexts and
   * renderers, and let Chromium's processes free caches and garbage. The next captures refill
   * the pool as they go (a page costs tens of ms). Nothing here changes which client a context
   * may serve.
   */
  async #shrinkWhenIdle(): Promise<void> {
    if (this.#closing) return;
    const current = this.#current;
    // Busy (captures, pages being made, a browser being replaced): try again later.
    if (
      this.#running.size > 0 ||
      this.#queue.queued > 0 ||
      this.#creatingSpares > 0 ||
      this.#givingBack > 0 ||
      this.#recycling ||
      this.#launching !== null ||
      !current?.connected
    ) {
      this.#scheduleIdleShrink();
      return;
    }
    const kept = this.#idle.findLast((page) => page.client === null) ?? this.#idle.at(-1);
    const extra = this.#idle.filter((page) => page !== kept);
    try {
      await Promise.all(extra.map((page) => this.#discard(page)));
      if (this.#running.size === 0 && current === this.#current) await current.relieveMemory();
      this.#logger?.info({ closed: extra.length, pages: this.#pages }, 'idle: pool shrunk');
    } catch (err) {
      this.#logger?.warn({ err: String(err) }, 'idle: could not shrink the pool');
    }
  }

  /**
   * Keeps at least `concurrency` pages in the pool and `#spares` never-used ones idle, created
   * on the current browser; when the pool is full, the least recently idle pages of clients
   * make room for the spares.
   */
  async #prepareSpares(): Promise<void> {
    const current = this.#current;
    if (!current?.connected || this.#recycling || this.#closing) return;
    const unused = this.#idle.filter((page) => page.client === null).length;
    const missing = Math.max(
      this.#concurrency - this.#pages,
      this.#spares - unused - this.#creatingSpares,
    );
    const creating: Promise<void>[] = [];
    for (let i = 0; i < missing; i++) {
      if (this.#pages >= this.#maxPages) {
        const used = this.#idle.find((page) => page.client !== null);
        if (!used) break;
        void this.#discard(used);
      }
      creating.push(this.#createSpare(current));
    }
    await Promise.all(creating);
  }

  async #createSpare(current: BrowserInstance): Promise<void> {
    this.#creatingSpares++;
    try {
      const page = await this.#createPage(current);
      if (this.#closing || page.instance !== this.#current) await this.#discard(page);
      else this.#makeIdle(page);
    } finally {
      this.#creatingSpares--;
    }
  }

  #checkBrowserHealth(): void {
    const current = this.#current;
    if (!current || this.#recycling || this.#launching) return;
    if (current.captures >= this.#browserRecycleAfter) {
      void this.#recycle(`${current.captures} captures`);
      return;
    }
    const now = Date.now();
    if (now - this.#lastUsageCheck < USAGE_CHECK_INTERVAL_MS) return;
    this.#lastUsageCheck = now;
    const usage = current.usage();
    if (usage.anonBytes > this.#maxRss) {
      void this.#recycle(`memory: ${Math.round(usage.anonBytes / 2 ** 20)} MiB resident`);
    }
  }

  /** Launches a replacement, then moves new captures over; the old browser closes once unused. */
  async #recycle(reason: string): Promise<void> {
    const old = this.#current;
    if (!old || this.#recycling || this.#closing) return;
    this.#recycling = true;
    this.#logger?.info({ browser: old.id, reason }, 'replacing the browser');
    try {
      const fresh = await this.#launch();
      if (this.#closing) {
        await this.#retire(fresh);
        return;
      }
      old.draining = true;
      this.#current = fresh;
      this.#restarts++;
      this.#lastUsageCheck = Date.now();
      setTimeout(() => void this.#retire(old), DRAIN_TIMEOUT_MS).unref();
      await this.#switchedBrowser(old);
    } catch (err) {
      this.#logger?.error(
        {
          err: String(err instanceof ChromiumLaunchError ? err.cause : err),
          ...(err instanceof ChromiumLaunchError ? err.report : {}),
        },
        'could not launch a replacement browser',
      );
    } finally {
      this.#recycling = false;
    }
  }

  /** After a new browser became current: drop idle pages of the old one, prepare new ones. */
  async #switchedBrowser(old: BrowserInstance): Promise<void> {
    const stale = this.#idle.filter((page) => page.instance !== this.#current);
    await Promise.all(stale.map((page) => this.#discard(page)));
    await this.#retireIfDrained(old);
    this.#recycling = false;
    await this.#prepareSpares().catch((err: unknown) => {
      this.#logger?.warn({ err: String(err) }, 'could not prepare pages on the new browser');
    });
  }

  #onDisconnected(instance: BrowserInstance): void {
    if (!this.#instances.has(instance) || instance.closing) return;
    // We cut the connection ourselves (a message over the bound): the browser is replaced
    // like a crashed one, and its captures are the same 503 (docs/security.md).
    const cut = instance.cutReason;
    void instance.exitReport(CRASH_EXIT_WAIT_MS).then((report) => {
      this.#logger?.error(
        { browserPid: instance.pid, browser: instance.id, ...report },
        cut === null
          ? 'chromium disconnected (crashed or killed)'
          : `chromium sent ${cut}; replacing it`,
      );
    });
    const crashed = this.#unavailable(
      cut === null
        ? 'the browser crashed; it is restarting'
        : 'the browser sent more than the service reads; it is restarting',
    );
    for (const running of this.#running) {
      const page = running.page;
      if (page?.instance === instance || (page === null && !instance.draining)) {
        running.controller.abort(crashed);
      }
    }
    for (const page of this.#idle.filter((p) => p.instance === instance)) void this.#discard(page);
    void this.#retire(instance);
    if (this.#closing || instance.draining) return;
    this.#restarts++;
    void this.#relaunch();
  }

  /**
   * Launches a browser after a crash or a failed launch, retrying with backoff until it works
   * or we close. `failures`: launch attempts that already failed (they set the first backoff).
   */
  #relaunch(failures = 0): Promise<BrowserInstance | null> {
    this.#launching ??= (async () => {
      for (let failed = failures; !this.#closing; failed++) {
        if (failed > 0) {
          const backoff = Math.min(
            MAX_RELAUNCH_BACKOFF_MS,
            MIN_RELAUNCH_BACKOFF_MS * 2 ** (failed - 1),
          );
          this.#nextAttemptAt = Date.now() + backoff;
          await sleep(backoff, this.#closed.signal).catch(() => {});
          if (this.#closing) break;
        }
        const attempt = this.#launch();
        this.#attempt = attempt;
        try {
          const instance = await attempt;
          if (this.#closing) {
            await this.#retire(instance);
            return null;
          }
          this.#current = instance;
          if (this.#launchError !== null) {
            this.#logger?.info({ pid: instance.pid, attempts: failed + 1 }, 'chromium recovered');
          }
          this.#launchError = null;
          void this.#prepareSpares().catch((err: unknown) => {
            this.#logger?.warn({ err: String(err) }, 'could not prepare pages after a restart');
          });
          return instance;
        } catch (err) {
          this.#launchFailed(err, { attempt: failed + 1 });
        } finally {
          this.#attempt = null;
        }
      }
      return null;
    })().finally(() => {
      this.#launching = null;
    });
    return this.#launching;
  }

  #classify(err: unknown, signal: AbortSignal, page: CapturePage | null): unknown {
    if (signal.aborted) return signal.reason;
    if (isAppError(err)) return err;
    // The browser went away under this capture (or before it had a page): not the capture's
    // fault, and not a 500 (docs/security.md, "No browser, no 500").
    const browserGone = page
      ? !page.instance.browser.connected
      : !(this.#current?.connected ?? false);
    if (browserGone) return this.#unavailable('the browser crashed; it is restarting');
    // No page yet: the browser failed to give one (wedged, being replaced), not the target.
    if (page === null) {
      this.#logger?.warn({ err: String(err) }, 'no page for a capture');
      return this.#unavailable('the browser is not answering; it is being replaced');
    }
    // The page replaced its own document while a capture step ran in it (a script reload,
    // a meta refresh, a consent manager reloading after opt-out): the target's doing.
    if (err instanceof Error && NAVIGATED.test(err.message)) {
      return new AppError(
        'target_error',
        'the page navigated away while it was being captured (a reload or redirect by the page itself)',
      );
    }
    this.#logger?.error({ err: String(err) }, 'render failed unexpectedly');
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
  const found = findChromium(options.executablePath);
  if (found === null) {
    throw new Error(
      options.executablePath
        ? `Chromium not found at ${options.executablePath}`
        : 'Chromium not found: set CHROME_PATH or install chromium',
    );
  }
  const renderer = new ChromiumRenderer(launchableBinary(found), options);
  await renderer.start();
  return renderer;
}
