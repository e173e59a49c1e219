/**
 * One worker slot's browser context and page, reused across captures. Isolation without a
 * fresh page per capture: after each capture the page goes to about:blank (the capture's
 * documents, timers and injected styles end there), then cookies, HTTP cache, navigation
 * history and window.name are cleared, and every origin the page touched has all its storage
 * wiped (localStorage, sessionStorage, IndexedDB, Cache Storage, service workers, ...). Each
 * capture sets the whole emulation state (viewport, scale, media features, background) anew.
 * The context itself is thrown away every `recycleAfter` captures and after any failure.
 *
 * What no clearing reaches (the context's HTTP authentication cache, HSTS and alt-svc state,
 * its open sockets) is kept from other accounts by never sharing a context: a page records the
 * client it rendered for and refuses any other client's capture.
 */
import type {
  BrowserContext,
  CDPSession,
  Frame,
  HTTPRequest,
  HTTPResponse,
  Page,
  Protocol,
} from 'puppeteer-core';
import { TimeoutError } from 'puppeteer-core';
import { BOUNDS } from '../../domain/bounds.ts';
import type {
  PageMetadata,
  PdfPaper,
  RenderOptions,
  RenderResult,
  WaitUntil,
} from '../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import type { Logger } from '../../lib/logger.ts';
import { raceAbort, sleep, withTimeout } from './abort.ts';
import type { BrowserInstance } from './browser-instance.ts';
import { encoderSettings } from './encoding.ts';
import type { FilterLists } from './filter-lists.ts';
import { fitImage, type ImageBounds, imageSize } from './image-size.ts';
import { type MemoryWatchdog, watchdogFor } from './memory-watchdog.ts';
import { navigationError, netErrorCode } from './net-errors.ts';
import { OPTION_STEPS, optionSteps, type StepPage, settles } from './option-steps.ts';
import {
  blockServiceWorkers,
  documentHeight,
  elementBox,
  expandInnerScroller,
  firstInvalidSelector,
  freezeAndHide,
  readMetadata,
  scrollThrough,
  scrollToBox,
  waitForPaintReady,
} from './page-scripts.ts';
import { inIsolatedWorld, pageBox, pageChoice, pageMetadata, pageNumber } from './page-values.ts';
import { type RequestMatcher, type RequestRules, requestRulesFor } from './request-rules.ts';

/**
 * After loading, the page counts as settled once no request has been in flight for this long
 * (requests still running at the load event are always waited for, up to the cap)...
 */
export const NETWORK_QUIET_MS = 50;
/** ...or this long once the page has started requests of its own after the load event. */
export const NETWORK_QUIET_ACTIVE_MS = 250;
/** ...but the settle wait never lasts longer than this (long-polling, analytics beacons). */
export const NETWORK_QUIET_CAP_MS = 2_000;
/** Full page: time allowed for scrolling through to trigger lazy loading. */
export const FULL_PAGE_SCROLL_BUDGET_MS = 5_000;
/** Full page: pause after each scroll step. */
const SCROLL_STEP_PAUSE_MS = 40;
/** Fonts and in-view images: longest wait for them to load and decode. */
export const PAINT_READY_BUDGET_MS = 3_000;
/**
 * A navigation aborted by Chromium (ERR_ABORTED): how long to wait for the raw headers that
 * show whether a redirect to a non-http(s) URL caused it. Only this failure path waits.
 */
const ABORTED_REDIRECT_GRACE_MS = 1_000;
/** The between-captures reset (blank page + clearing) must finish within this. */
export const RESET_TIMEOUT_MS = 5_000;
/** Closing a context (and its renderer processes) must finish within this. */
const DISPOSE_TIMEOUT_MS = 5_000;
/** Page.captureScreenshot's own bound (RENDER_TIMEOUT_MS, at most 300 s, ends it first). */
const SCREENSHOT_COMMAND_TIMEOUT_MS = 300_000;
/** `pdf_paper` sizes in inches, short side first. */
const PAPER_INCHES: Record<PdfPaper, readonly [number, number]> = {
  a4: [8.27, 11.69],
  letter: [8.5, 11],
  legal: [8.5, 14],
  a3: [11.69, 16.54],
  tabloid: [11, 17],
};
/** A PDF's margins on every side, as Chromium's own print preview sets them (about 1 cm). */
const PDF_MARGIN_INCHES = 0.4;
/** Pages a PDF holds at most; a longer document is cut (`truncated`). */
export const MAX_PDF_PAGES = 100;
const CSS_PX_PER_INCH = 96;
const POINTS_PER_INCH = 72;

/** Pages of a PDF Chromium wrote (its page objects are plain dictionaries). */
export function pdfPageCount(pdf: Buffer): number {
  return pdf.toString('latin1').match(/\/Type\s*\/Page(?![a-z])/g)?.length ?? 0;
}

/** Our own session's Fetch: every request, for its authentication challenges only. */
const AUTH_ONLY_FETCH = { handleAuthRequests: true, patterns: [{ urlPattern: '*' }] };

/**
 * `metadata.final_url`: the page's URL, which the page itself can make up to 2 MiB long
 * (`history.replaceState`); one longer than a capture's `url` may be is replaced by the URL
 * its document was loaded from (the last redirect hop), else the capture's own.
 */
function finalUrl(current: string, run: CaptureRun, o: RenderOptions): string {
  const max = BOUNDS.capture.urlMaxLength;
  if (current.length <= max) return current;
  const loaded = run.mainResponse?.url() ?? '';
  return loaded !== '' && loaded.length <= max ? loaded : o.url;
}

/** More origins (or storage keys) than this: the context is replaced instead of cleared. */
const MAX_TRACKED_ORIGINS = 200;

const PUPPETEER_WAIT: Record<
  WaitUntil,
  'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2'
> = {
  load: 'load',
  domcontentloaded: 'domcontentloaded',
  networkidle0: 'networkidle0',
  networkidle2: 'networkidle2',
};

export interface CaptureSettings {
  /** Device px; full-page and element images are cut there (`truncated: true`). */
  maxPageHeight: number;
  /** width x height in device px of any image; the height is cut to stay within it. */
  maxImagePixels: number;
  /** Resident memory one renderer may hold; a renderer over it is killed (its capture: 500). */
  rendererMaxMemoryBytes: number;
  logger?: Logger;
  /** Called for every main-frame document request (each redirect hop too); throws to refuse. */
  checkNavigation?: (url: URL) => Promise<void>;
  /** The shipped filter lists (`block_ads`, `block_trackers`); without them those are 500s. */
  filterLists?: FilterLists;
  /** The settle wait's cap (NETWORK_QUIET_CAP_MS); tests raise it to see a stuck request. */
  networkQuietCapMs?: number;
}

export type CaptureOutput = Omit<RenderResult, 'renderMs'>;

/** The wait for fonts and images, started early (#earlyPaintReady). */
interface EarlyPaintReady {
  /** Resolves whether it finished and still holds (else it is waited for again). */
  valid(): Promise<boolean>;
}

/** The part of the page that becomes the image (no clip: the viewport as it is). */
interface ImageFrame {
  bounds: ImageBounds;
  clip: Protocol.Page.Viewport | undefined;
  beyondViewport: boolean;
  truncated: boolean;
}

const noop = (): void => {};

/** A CSS px clip (what Page.captureScreenshot takes) of a rectangle in device px. */
function deviceClip(
  x: number,
  y: number,
  width: number,
  height: number,
  dsf: number,
): Protocol.Page.Viewport {
  return { x: x / dsf, y: y / dsf, width: width / dsf, height: height / dsf, scale: 1 };
}

function httpOrigin(url: string): string | null {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * The favicon Chromium fetches by itself once a page has loaded (type "other", initiated by
 * nothing in the page). It never shows in the image, so the settle wait does not wait for it:
 * it used to turn the short quiet window after load into the long one (NETWORK_QUIET_ACTIVE_MS)
 * on most first visits of an origin. It still goes through the egress proxy like any request.
 */
function isBrowserFavicon(request: HTTPRequest): boolean {
  return (
    request.resourceType() === 'other' &&
    request.initiator()?.type === 'other' &&
    !request.isNavigationRequest()
  );
}

/**
 * Chromium's network request id of a request: puppeteer 24 keeps it as `id` (typed internal);
 * redirect hops share it, as they share one in-flight slot.
 */
function requestId(request: HTTPRequest): string {
  const id = (request as unknown as { id?: unknown }).id;
  if (typeof id !== 'string') throw new Error('puppeteer request without an id');
  return id;
}

/** State of the capture in progress: network activity, the main document, refusals. */
class CaptureRun {
  readonly controller = new AbortController();
  /**
   * Requests in flight, by their network request id (not by puppeteer's object): with request
   * interception on, Chromium pauses a web font twice and puppeteer makes a second request
   * object that never gets its finished event (puppeteer issue 11641); by id, the first one's
   * event ends both, where the object kept the settle wait open until its cap.
   */
  readonly inflight = new Set<string>();
  lastActivity = performance.now();
  /** When the main navigation finished (the wait_until event), null before. */
  loadedAt: number | null = null;
  /**
   * The page fetches on its own: a request was still in flight when the load event fired (its
   * handlers start requests before Chromium reports the event), or one started after loadedAt.
   */
  activeAfterLoad = false;
  /** Last main-frame document response (redirect hops included, final one last). */
  mainResponse: HTTPResponse | null = null;
  /** The main document answered as an attachment (Chromium turns that into a denied download). */
  download = false;
  /** Scheme of a non-http(s) redirect, which Chromium ends as ERR_ABORTED. */
  unsafeRedirect: string | null = null;
  readonly checks = new Set<Promise<void>>();

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Races a promise with the run's end (deadline, abort, crash, a refused navigation). */
  step<T>(promise: Promise<T>): Promise<T> {
    return raceAbort(promise, this.signal);
  }

  fail(err: unknown): void {
    if (!this.controller.signal.aborted) this.controller.abort(err);
  }

  /** Waits for pending navigation checks; a refusal aborts the run. */
  async settleChecks(): Promise<void> {
    while (this.checks.size > 0) {
      await raceAbort(Promise.all([...this.checks]), this.signal);
    }
    this.signal.throwIfAborted();
  }
}

export class CapturePage {
  readonly instance: BrowserInstance;
  /** Captures started on this context. */
  captures = 0;
  /** The client this context has rendered for (RenderClient id); null while never used. */
  client: string | null = null;
  /** What the capture in progress is doing, for timeout messages. */
  phase = 'starting';
  readonly #context: BrowserContext;
  readonly #page: Page;
  readonly #cdp: CDPSession;
  readonly #settings: CaptureSettings;
  readonly #watchdog: MemoryWatchdog;
  readonly #origins = new Set<string>();
  /** Partitioned storage keys of cross-site frames (`https://b.example/^0https://a.example`). */
  readonly #storageKeys = new Set<string>();
  readonly #pendingKeys = new Set<Promise<void>>();
  /** Set when clearing cannot be trusted to cover everything: replace the context instead. */
  #needsFreshContext: string | null = null;
  #run: CaptureRun | null = null;
  /** The request filter of the last capture that had one (see #requestRules). */
  #rules: RequestRules | null = null;
  /** Whether Chromium pauses the page's requests for #rules (only while a capture needs it). */
  #intercepting = false;
  /** The options' document scripts of the capture in progress (OptionStep.documentScript). */
  #documentScripts: string[] = [];
  readonly #watched = new WeakSet<CDPSession>();
  #broken: string | null = null;
  #disposed: Promise<boolean> | null = null;

  private constructor(
    instance: BrowserInstance,
    parts: { context: BrowserContext; page: Page; cdp: CDPSession },
    settings: CaptureSettings,
  ) {
    this.instance = instance;
    this.#context = parts.context;
    this.#page = parts.page;
    this.#cdp = parts.cdp;
    this.#settings = settings;
    this.#watchdog = watchdogFor(instance, {
      limitBytes: settings.rendererMaxMemoryBytes,
      ...(settings.logger ? { logger: settings.logger } : {}),
    });
  }

  static async create(instance: BrowserInstance, settings: CaptureSettings): Promise<CapturePage> {
    const parts = await instance.newContextPage();
    const page = new CapturePage(instance, parts, settings);
    try {
      await page.#setup();
    } catch (err) {
      await page.dispose();
      throw err;
    }
    return page;
  }

  /** Whether the page can take another capture (not crashed, not closed, context not full). */
  get usable(): boolean {
    return this.#broken === null && this.#disposed === null && this.#needsFreshContext === null;
  }

  async #setup(): Promise<void> {
    const page = this.#page;
    page.on('dialog', (dialog) => {
      dialog.dismiss().catch(noop);
    });
    page.on('request', (request) => this.#onRequest(request));
    page.on('requestfinished', (request) => this.#onRequestDone(request));
    page.on('requestfailed', (request) => this.#onRequestDone(request));
    page.on('response', (response) => this.#onResponse(response));
    page.on('load', () => this.#onLoadEvent());
    page.on('framenavigated', (frame) => {
      this.#noteOrigin(frame.url());
      if (frame !== page.mainFrame()) this.#noteStorageKey(frame);
    });
    page.on('error', () => {
      this.#markBroken(
        this.#watchdog.killedLately()
          ? `the page used too much memory (more than ${Math.round(this.#watchdog.limitBytes / 2 ** 20)} MiB); its render was stopped`
          : 'the page crashed while rendering',
      );
    });
    page.on('close', () => this.#markBroken('the page was closed while rendering'));
    page.setDefaultTimeout(0);
    page.setDefaultNavigationTimeout(0);
    this.#cancelChallenges();
    await Promise.all([
      page.setBypassServiceWorker(true),
      page.evaluateOnNewDocument(blockServiceWorkers),
      this.#cdp.send('Fetch.enable', AUTH_ONLY_FETCH),
    ]);
  }

  /**
   * An HTTP authentication challenge is cancelled, as a person cancels the login prompt: the
   * request ends with its 401 and the capture goes on. Headless Chromium would otherwise wait
   * for an answer no one gives, and the capture with it until its deadline. Chromium only
   * reports a challenge for a request it paused, so while this session's Fetch is on (every
   * capture without request rules; with rules, puppeteer's interception answers, see
   * #requestRules) each request is let go at once, one round trip to this process.
   */
  #cancelChallenges(): void {
    const cdp = this.#cdp;
    cdp.on('Fetch.requestPaused', (event) => {
      cdp.send('Fetch.continueRequest', { requestId: event.requestId }).catch(noop);
    });
    cdp.on('Fetch.authRequired', (event) => {
      cdp
        .send('Fetch.continueWithAuth', {
          requestId: event.requestId,
          authChallengeResponse: { response: 'CancelAuth' },
        })
        .catch(noop);
    });
  }

  #markBroken(reason: string): void {
    this.#broken ??= reason;
    this.#run?.fail(new AppError('internal_error', reason));
  }

  #noteOrigin(url: string): void {
    const origin = httpOrigin(url);
    if (origin === null || this.#origins.has(origin)) return;
    if (this.#origins.size >= MAX_TRACKED_ORIGINS) {
      this.#needsFreshContext = 'too many origins';
      return;
    }
    this.#origins.add(origin);
  }

  /**
   * Records the storage key of a subframe. A cross-site iframe stores under a partitioned key
   * (its origin + the top-level site) that clearing its origin does not reach, so the key
   * itself is cleared after the capture. Chromium may still answer with the parent's key just
   * after the frame navigated, hence the check and the retries; a key we cannot learn means
   * the context is replaced rather than trusted.
   */
  #noteStorageKey(frame: Frame): void {
    const origin = httpOrigin(frame.url());
    if (origin === null) return;
    // puppeteer 24 has no public frame id; without it we cannot ask, so we do not trust.
    const frameId = (frame as unknown as { _id?: unknown })._id;
    if (typeof frameId !== 'string') {
      this.#needsFreshContext = 'frame storage key unknown';
      return;
    }
    const pending = (async () => {
      for (let attempt = 0; attempt < 8; attempt++) {
        try {
          const { storageKey } = await this.#cdp.send('Storage.getStorageKey', { frameId });
          if (storageKey.startsWith(`${origin}/`)) {
            if (storageKey !== `${origin}/`) {
              if (this.#storageKeys.size >= MAX_TRACKED_ORIGINS) {
                this.#needsFreshContext = 'too many storage keys';
              }
              this.#storageKeys.add(storageKey);
            }
            return;
          }
        } catch {
          // Not committed yet, or already gone.
        }
        await sleep(25);
      }
      this.#needsFreshContext = 'frame storage key unknown';
    })();
    this.#pendingKeys.add(pending);
    pending.finally(() => this.#pendingKeys.delete(pending)).catch(noop);
  }

  #isMainDocument(request: HTTPRequest): boolean {
    return request.isNavigationRequest() && request.frame() === this.#page.mainFrame();
  }

  #onRequest(request: HTTPRequest): void {
    this.#noteOrigin(request.url());
    this.#filterRequest(request);
    const run = this.#run;
    if (!run || isBrowserFavicon(request)) return;
    run.inflight.add(requestId(request));
    run.lastActivity = performance.now();
    if (run.loadedAt !== null) run.activeAfterLoad = true;
    if (this.#isMainDocument(request)) {
      this.#watchRedirects(request.client);
      this.#checkMainDocument(run, request);
    }
  }

  /**
   * A paused request (only while a capture's options need the filter): blocked, or let go
   * with the headers meant for the target. Every paused request is answered, whatever else
   * happens, or the page would wait for it forever.
   */
  #filterRequest(request: HTTPRequest): void {
    if (request.interceptResolutionState().action !== 'none') return;
    const verdict = this.#rules?.decide({
      url: request.url(),
      resourceType: request.resourceType(),
      mainDocument: this.#isMainDocument(request),
      sourceUrl: request.frame()?.url() ?? '',
    }) ?? { block: false, headers: null };
    let answer: Promise<void>;
    if (verdict.block) {
      answer = request.abort('blockedbyclient');
    } else if (verdict.headers === null) {
      answer = request.continue();
    } else {
      const names = new Set(Object.keys(verdict.headers).map((n) => n.toLowerCase()));
      const kept = Object.entries(request.headers()).filter(([n]) => !names.has(n.toLowerCase()));
      answer = request.continue({ headers: { ...Object.fromEntries(kept), ...verdict.headers } });
    }
    answer.catch(noop); // the page or the request is gone
  }

  /**
   * A redirect to javascript: or mailto: never becomes a request: Chromium just aborts the
   * navigation. Its Location is only visible in the raw response headers, which puppeteer's
   * own session for the page already receives (listening adds no protocol traffic). It is
   * only consulted when the main navigation fails with ERR_ABORTED, that is before the main
   * document commits, when the only responses are those of its own redirect chain.
   */
  #watchRedirects(client: CDPSession): void {
    if (this.#watched.has(client)) return;
    this.#watched.add(client);
    client.on('Network.responseReceivedExtraInfo', (event) => {
      const run = this.#run;
      if (!run || event.statusCode < 300 || event.statusCode > 399) return;
      const location = Object.entries(event.headers).find(
        ([k]) => k.toLowerCase() === 'location',
      )?.[1];
      let target: URL;
      try {
        target = new URL(String(location));
      } catch {
        return; // relative: same scheme as the response
      }
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        run.unsafeRedirect = target.protocol.slice(0, -1).slice(0, 32);
      }
    });
  }

  #checkMainDocument(run: CaptureRun, request: HTTPRequest): void {
    let url: URL;
    try {
      url = new URL(request.url());
    } catch {
      run.fail(new AppError('url_not_allowed', 'the page navigated to an invalid URL'));
      return;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      const redirect = request.redirectChain().length > 0;
      // about:, blob: and data: documents fetch nothing; anything else, or any redirect off
      // http(s), is refused (Chromium blocks most of these itself, with ERR_UNSAFE_REDIRECT).
      const harmless =
        url.protocol === 'about:' || url.protocol === 'blob:' || url.protocol === 'data:';
      if (redirect || !harmless) {
        const scheme = url.protocol.slice(0, -1).slice(0, 32);
        run.fail(new AppError('url_not_allowed', `the page was redirected to a ${scheme}: URL`));
      }
      return;
    }
    const check = this.#settings.checkNavigation;
    if (!check) return;
    const pending = check(url).then(noop, (err: unknown) => {
      run.fail(
        isAppError(err)
          ? err
          : new AppError('internal_error', 'the navigation check failed', { cause: err }),
      );
    });
    run.checks.add(pending);
    pending.finally(() => run.checks.delete(pending)).catch(noop);
  }

  /**
   * The main frame's load event, seen in order with the network events: a request the load
   * handlers started is in flight here even when it ends before goto() resolves.
   */
  #onLoadEvent(): void {
    const run = this.#run;
    if (run && run.inflight.size > 0) run.activeAfterLoad = true;
  }

  #onRequestDone(request: HTTPRequest): void {
    const run = this.#run;
    if (!run || isBrowserFavicon(request)) return;
    run.inflight.delete(requestId(request));
    run.lastActivity = performance.now();
  }

  #onResponse(response: HTTPResponse): void {
    const run = this.#run;
    const request = response.request();
    if (!run || isBrowserFavicon(request)) return;
    run.lastActivity = performance.now();
    if (!this.#isMainDocument(request)) return;
    run.mainResponse = response;
    const headers = response.headers();
    const refused = headers['x-egress-refused'];
    if (refused !== undefined && response.status() === 403) {
      // The egress proxy's refusal of a plain-http target (it answers 403 with this header).
      run.fail(new AppError('url_not_allowed', `the target is not allowed: ${refused}`));
      return;
    }
    if (headers['x-egress-error'] === 'unreachable' && response.status() === 502) {
      // The proxy's own 502 (it could not connect), not a page of the target.
      const host = new URL(response.url()).host;
      run.fail(
        new AppError('target_unreachable', `could not reach ${host}: the connection failed`),
      );
      return;
    }
    if (/^\s*attachment/i.test(headers['content-disposition'] ?? '')) run.download = true;
  }

  /**
   * Renders one capture. Rejects with the signal's reason once it aborts (deadline, caller
   * abort, browser crash), with an AppError for expected failures, or with whatever broke.
   */
  async capture(
    options: RenderOptions,
    signal: AbortSignal,
    client: string,
  ): Promise<CaptureOutput> {
    signal.throwIfAborted();
    if (this.client !== null && this.client !== client) {
      throw new AppError('internal_error', 'a browser context is never shared between clients');
    }
    // The API validates the URL; this is the last line before Chromium (file:, chrome:, ...).
    if (!/^https?:\/\//i.test(options.url)) {
      throw new AppError('url_not_allowed', 'only http and https URLs can be captured');
    }
    if (!this.usable) throw new AppError('internal_error', this.#broken ?? 'page not usable');
    const run = new CaptureRun();
    const forward = (): void => run.fail(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    this.#run = run;
    this.client = client;
    this.captures++;
    this.phase = 'starting';
    try {
      return await this.#capture(options, run);
    } catch (err) {
      throw run.signal.aborted ? run.signal.reason : err;
    } finally {
      signal.removeEventListener('abort', forward);
      this.#run = null;
    }
  }

  /**
   * The capture's steps, in order. Each option's own part (emulation, selectors to check,
   * waits after loading) comes from OPTION_STEPS; the rest reads the options directly.
   */
  async #capture(o: RenderOptions, run: CaptureRun): Promise<CaptureOutput> {
    await this.#emulate(o, run);
    await this.#checkSelectors(o, run);
    const targetStatus = await this.#load(o, run);
    if (o.failOnHttpError && targetStatus !== null && targetStatus >= 400) {
      throw new AppError(
        'target_error',
        `the target answered HTTP ${targetStatus} (fail_on_http_error is set)`,
      );
    }
    const paintReady = this.#earlyPaintReady(o, run);
    await this.#waitAfterLoad(o, run);
    const metadata = o.metadata ? await this.#metadata(o, run, targetStatus) : null;
    await this.#prepareCapture(o, run);
    if (o.format === 'pdf') {
      const pdf = await this.#pdf(o, run);
      return { ...pdf, targetStatus, metadata };
    }
    const frame = await this.#frame(o, run, paintReady);
    await run.settleChecks();
    const image = await this.#screenshot(o, run, frame);
    return { ...image, truncated: frame.truncated, targetStatus, metadata };
  }

  /**
   * `format: pdf`: the whole document printed (print media, as Chromium prints) on the paper,
   * its lazy images and fonts loaded first, at most MAX_PDF_PAGES pages; `pdf_single_page`
   * lays the page out at the paper's width and prints one page as tall as the content, cut at
   * the height bound. `width` and `height` are the first page's size in points.
   */
  async #pdf(
    o: RenderOptions,
    run: CaptureRun,
  ): Promise<Omit<CaptureOutput, 'targetStatus' | 'metadata'>> {
    const settle = settles(o);
    // The height bound in CSS px: a PDF has no device pixels.
    const maxHeight = this.#settings.maxPageHeight;
    this.phase = 'scrolling through the page';
    await run.step(
      inIsolatedWorld(this.#page, scrollThrough, {
        maxHeight,
        budgetMs: FULL_PAGE_SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
      }),
    );
    this.phase = 'waiting for fonts and images';
    if (settle) await this.#networkQuiet(run);
    await run.step(
      inIsolatedWorld(this.#page, waitForPaintReady, {
        top: 0,
        bottom: maxHeight,
        budgetMs: settle ? PAINT_READY_BUDGET_MS : 0,
      }),
    );
    await run.settleChecks();
    this.phase = 'printing the PDF';
    const [shortSide, longSide] = PAPER_INCHES[o.pdfPaper];
    const paperWidth = o.pdfLandscape ? longSide : shortSide;
    let paperHeight = o.pdfLandscape ? shortSide : longSide;
    let margin = PDF_MARGIN_INCHES;
    let truncated = false;
    if (o.pdfSinglePage) {
      margin = 0;
      // Laid out at the paper's width with print styles, as printing will lay it out.
      await run.step(
        Promise.all([
          this.#cdp.send('Emulation.setEmulatedMedia', {
            media: 'print',
            features: optionSteps.flatMap((s) => s.mediaFeatures?.(o) ?? []),
          }),
          this.#cdp.send('Emulation.setDeviceMetricsOverride', {
            width: Math.round(paperWidth * CSS_PX_PER_INCH),
            height: o.height,
            deviceScaleFactor: 1,
            mobile: false,
          }),
        ]),
      );
      const height = pageNumber(
        await run.step(inIsolatedWorld(this.#page, documentHeight)),
        'document height',
      );
      truncated = height > maxHeight;
      paperHeight = Math.max(1, Math.min(height, maxHeight)) / CSS_PX_PER_INCH;
    }
    const print = (pageRanges: string) =>
      this.#cdp.send(
        'Page.printToPDF',
        {
          paperWidth,
          paperHeight,
          marginTop: margin,
          marginBottom: margin,
          marginLeft: margin,
          marginRight: margin,
          printBackground: o.pdfPrintBackground,
          preferCSSPageSize: false,
          pageRanges,
          // As a stream read in bounded chunks, never as one message of any size.
          transferMode: 'ReturnAsStream',
        },
        { timeout: SCREENSHOT_COMMAND_TIMEOUT_MS },
      );
    const out = await run.step(print(o.pdfSinglePage ? '1' : `1-${MAX_PDF_PAGES}`));
    const pdf = await this.#readPdf(out.stream, run);
    if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
      throw new AppError('internal_error', 'chromium returned an unreadable pdf');
    }
    if (!o.pdfSinglePage && pdfPageCount(pdf) >= MAX_PDF_PAGES) {
      // More pages than printed, unless the page after the last one does not exist.
      truncated = await run.step(
        print(String(MAX_PDF_PAGES + 1)).then(
          (next) => {
            this.#closeStream(next.stream);
            return true;
          },
          () => false,
        ),
      );
    }
    return {
      image: pdf,
      format: 'pdf',
      width: Math.round(paperWidth * POINTS_PER_INCH),
      height: Math.round(paperHeight * POINTS_PER_INCH),
      truncated,
    };
  }

  /**
   * A printed PDF read from its stream in chunks (IO.read), at most BOUNDS.browser.maxPdfBytes:
   * a larger one is refused before more of it is read (400, nothing charged).
   */
  async #readPdf(handle: string | undefined, run: CaptureRun): Promise<Buffer> {
    if (handle === undefined) throw new AppError('internal_error', 'chromium returned no pdf');
    const max = BOUNDS.browser.maxPdfBytes;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for (;;) {
        const read = await run.step(
          this.#cdp.send('IO.read', { handle, size: BOUNDS.browser.pdfReadChunkBytes }),
        );
        const chunk = Buffer.from(read.data, read.base64Encoded ? 'base64' : 'utf8');
        size += chunk.length;
        if (size > max) {
          throw new AppError(
            'invalid_request',
            `the PDF is larger than the ${max / 2 ** 20} MiB cap for PDFs; print fewer or smaller pages`,
          );
        }
        chunks.push(chunk);
        if (read.eof) return Buffer.concat(chunks, size);
      }
    } finally {
      this.#closeStream(handle);
    }
  }

  /** Frees a stream Chromium holds for us (the page's context closing frees it too). */
  #closeStream(handle: string | undefined): void {
    if (handle !== undefined) this.#cdp.send('IO.close', { handle }).catch(noop);
  }

  /** `metadata`: read once the page has settled and its actions ran, before the capture. */
  async #metadata(
    o: RenderOptions,
    run: CaptureRun,
    httpStatus: number | null,
  ): Promise<PageMetadata> {
    this.phase = 'reading the page metadata';
    const read = pageMetadata(
      await run.step(
        inIsolatedWorld(this.#page, readMetadata, {
          maxText: BOUNDS.capture.maxMetadataText,
          maxUrl: BOUNDS.capture.urlMaxLength,
          maxRaw: BOUNDS.capture.pageValueMaxChars,
        }),
      ),
    );
    return { ...read, final_url: finalUrl(this.#page.url(), run, o), http_status: httpStatus };
  }

  /** The viewport and every option's emulation, set anew for each capture. */
  async #emulate(o: RenderOptions, run: CaptureRun): Promise<void> {
    this.phase = 'preparing the page';
    if (o.omitBackground && o.format !== 'jpeg') {
      // Clearing Chromium's background override does not make this page's view opaque again
      // (Chromium 156: the next capture on the page came out transparent), so the page is
      // not used again: its context is closed after this capture.
      this.#needsFreshContext = 'transparent background';
    }
    await run.step(
      Promise.all([
        this.#viewport(o),
        // One call for the media type and features: each call of this command replaces both.
        this.#cdp.send('Emulation.setEmulatedMedia', {
          media: optionSteps.map((s) => s.mediaType?.(o) ?? '').find((m) => m !== '') ?? '',
          features: optionSteps.flatMap((s) => s.mediaFeatures?.(o) ?? []),
        }),
        ...optionSteps.map((s) => s.emulate?.(this.#cdp, o)),
        this.#requestRules(o),
      ]),
    );
  }

  /**
   * The capture's request filter. puppeteer's interception is turned on only for captures
   * whose options need it, and off again for the next one that does not; our own session's
   * (#cancelChallenges) is on whenever puppeteer's is off, so a request is paused once.
   */
  async #requestRules(o: RenderOptions): Promise<void> {
    this.#rules = requestRulesFor(o, await this.#listMatchers(o));
    const wanted = this.#rules !== null;
    await Promise.all([
      wanted !== this.#intercepting &&
        Promise.all([
          // With interception on, puppeteer answers a challenge before our session can (it
          // answers with "Default", which headless Chromium never completes). With (empty)
          // credentials set it answers with those once, then cancels, and the request ends
          // with its 401. The target's own credentials (http_auth) go as a header instead,
          // to its origin only, so they never answer another origin's challenge.
          this.#page.authenticate(wanted ? { username: '', password: '' } : null),
          this.#page.setRequestInterception(wanted),
          wanted
            ? this.#cdp.send('Fetch.disable')
            : this.#cdp.send('Fetch.enable', AUTH_ONLY_FETCH),
        ]).then(() => {
          this.#intercepting = wanted;
        }),
      this.#setDocumentScripts(o),
    ]);
  }

  async #listMatchers(o: RenderOptions): Promise<RequestMatcher[]> {
    const names = [...(o.blockAds ? ['ads'] : []), ...(o.blockTrackers ? ['trackers'] : [])];
    if (names.length === 0) return [];
    const lists = this.#settings.filterLists;
    if (!lists) throw new AppError('internal_error', 'the filter lists are not available');
    return Promise.all(
      names.map(async (name) => (await lists.get(name as 'ads' | 'trackers')).matches),
    );
  }

  /** The last capture's document scripts removed, this one's added (before it loads). */
  async #setDocumentScripts(o: RenderOptions): Promise<void> {
    const old = this.#documentScripts;
    this.#documentScripts = [];
    await Promise.all(old.map((id) => this.#page.removeScriptToEvaluateOnNewDocument(id)));
    const sources = optionSteps
      .map((s) => s.documentScript?.(o) ?? null)
      .filter((source): source is string => source !== null);
    for (const source of sources) {
      const { identifier } = await this.#page.evaluateOnNewDocument(source);
      this.#documentScripts.push(identifier);
    }
  }

  #viewport(o: RenderOptions): Promise<unknown> {
    // Device metrics and the screenshot go through the same session: a captureScreenshot on
    // a session without its own override renders at scale 1.
    return this.#cdp.send('Emulation.setDeviceMetricsOverride', {
      width: o.width,
      height: o.height,
      deviceScaleFactor: o.deviceScaleFactor,
      mobile: o.mobile,
      screenWidth: o.width,
      screenHeight: o.height,
      // A phone turned on its side reports it; a desktop keeps Chromium's own orientation.
      ...(o.mobile
        ? {
            screenOrientation:
              o.width > o.height
                ? { type: 'landscapePrimary' as const, angle: 90 }
                : { type: 'portraitPrimary' as const, angle: 0 },
          }
        : {}),
    });
  }

  /** Every CSS selector the options use is checked by the page's own parser, before loading. */
  async #checkSelectors(o: RenderOptions, run: CaptureRun): Promise<void> {
    const selectors = optionSteps
      .flatMap((s) => s.selectors?.(o) ?? [])
      .filter((s): s is string => s !== null);
    if (selectors.length === 0) return;
    const bad = pageChoice(
      await run.step(inIsolatedWorld(this.#page, firstInvalidSelector, selectors)),
      selectors,
      'selector check',
    );
    if (bad !== null) {
      throw new AppError('invalid_request', `"${bad.slice(0, 200)}" is not a valid CSS selector`);
    }
  }

  /** Navigates to the URL; resolves the target's HTTP status (null when there was none). */
  async #load(o: RenderOptions, run: CaptureRun): Promise<number | null> {
    const signal = run.signal;
    this.phase = 'loading the page';
    let response: HTTPResponse | null;
    try {
      response = await run.step(
        this.#page.goto(o.url, { waitUntil: PUPPETEER_WAIT[o.waitUntil], timeout: 0, signal }),
      );
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      // A refused redirect hop explains a failed navigation better than the net error does.
      await run.settleChecks();
      if (netErrorCode(String(err)) === 'ERR_ABORTED' && !run.download) {
        // The raw headers of the redirect come from the network service and may trail the
        // failure: a few ms on a quiet machine, more on a loaded one (seen in a suite run).
        const until = performance.now() + ABORTED_REDIRECT_GRACE_MS;
        while (run.unsafeRedirect === null && performance.now() < until) await sleep(20, signal);
      }
      throw this.#navigationFailure(err, o.url, run);
    }
    run.loadedAt = performance.now();
    await run.settleChecks();
    return (response ?? run.mainResponse)?.status() ?? null;
  }

  /** The options' waits once the page has loaded (selector, network, delay), in table order. */
  async #waitAfterLoad(o: RenderOptions, run: CaptureRun): Promise<void> {
    const page: StepPage = {
      page: this.#page,
      signal: run.signal,
      step: (promise) => run.step(promise),
      networkQuiet: () => this.#networkQuiet(run),
      lists: this.#settings.filterLists ?? null,
    };
    for (const { afterLoad } of optionSteps) {
      const phase = afterLoad?.phase(o) ?? null;
      if (afterLoad === undefined || phase === null) continue;
      this.phase = phase;
      await afterLoad.run(page, o);
    }
  }

  /**
   * A viewport capture's wait for fonts and in-view images, started as soon as the page has
   * loaded so that it overlaps the network settle wait instead of following it. It only
   * counts when nothing happened on the network after it started, and it is not started when
   * another after-load step will run (a wait, a delay, a page action): #frameViewport waits
   * then. null: no early wait.
   */
  #earlyPaintReady(o: RenderOptions, run: CaptureRun): EarlyPaintReady | null {
    if (!settles(o) || o.fullPage || o.selector !== null || o.clip !== null) return null;
    // Another step after load (a selector wait, a delay, injected styles or scripts, a click,
    // a scroll) may change what is in view: the wait then comes after them.
    const others = optionSteps.filter((s) => s !== OPTION_STEPS.wait_until);
    if (others.some((s) => (s.afterLoad?.phase(o) ?? null) !== null)) return null;
    const startedAt = performance.now();
    const done = inIsolatedWorld(this.#page, waitForPaintReady, {
      top: 0,
      bottom: o.height,
      budgetMs: PAINT_READY_BUDGET_MS,
    }).then(
      () => true,
      () => false,
    );
    return {
      // Valid when it finished and the network stayed still since it started (a request
      // then could have added an image it did not see).
      valid: async () => {
        const ok = await run.step(done);
        return ok && run.inflight.size === 0 && run.lastActivity <= startedAt;
      },
    };
  }

  /** Animations frozen, `hide_selectors` hidden. */
  async #prepareCapture(o: RenderOptions, run: CaptureRun): Promise<void> {
    this.phase = 'preparing the capture';
    await run.step(inIsolatedWorld(this.#page, freezeAndHide, o.hideSelectors));
  }

  /**
   * What part of the page becomes the image: an element, the full page or the viewport.
   * Every image stays within the plan width x scale, the height limit and the pixel budget;
   * the clip is cut before Chromium renders it, so nothing larger is ever encoded or sent.
   */
  async #frame(
    o: RenderOptions,
    run: CaptureRun,
    paintReady: EarlyPaintReady | null,
  ): Promise<ImageFrame> {
    // The width bound in whole device px as Chromium sizes a viewport of the plan's width
    // (rounded: 333 CSS px at 2.5 is 833 device px), so a viewport of that width fits.
    const bounds: ImageBounds = {
      maxWidth: Math.round(o.maxWidth * o.deviceScaleFactor),
      maxHeight: this.#settings.maxPageHeight,
      maxPixels: this.#settings.maxImagePixels,
    };
    if (o.selector !== null) return this.#frameElement(o, o.selector, run, bounds);
    if (o.clip !== null) {
      await run.step(inIsolatedWorld(this.#page, scrollToBox, o.clip));
      return this.#frameBox(o, o.clip, run, bounds);
    }
    if (o.fullPage) return this.#frameFullPage(o, run, bounds);
    return this.#frameViewport(o, run, bounds, paintReady);
  }

  async #frameElement(
    o: RenderOptions,
    selector: string,
    run: CaptureRun,
    bounds: ImageBounds,
  ): Promise<ImageFrame> {
    const box = pageBox(await run.step(inIsolatedWorld(this.#page, elementBox, selector)));
    if (box === null) {
      throw new AppError(
        'invalid_request',
        `selector "${selector.slice(0, 200)}" matched no element`,
      );
    }
    return this.#frameBox(o, box, run, bounds, selector);
  }

  /**
   * A box of the page (CSS px of the document: an element's, or `clip`) as the image, cut to
   * the bounds; its fonts and images awaited.
   */
  async #frameBox(
    o: RenderOptions,
    box: { x: number; y: number; width: number; height: number },
    run: CaptureRun,
    bounds: ImageBounds,
    selector?: string,
  ): Promise<ImageFrame> {
    const dsf = o.deviceScaleFactor;
    // Snap to the device pixel grid so the image is whole pixels of exactly the box.
    const x0 = Math.max(0, Math.floor(box.x * dsf));
    const y0 = Math.max(0, Math.floor(box.y * dsf));
    const x1 = Math.ceil((box.x + box.width) * dsf);
    const y1 = Math.ceil((box.y + box.height) * dsf);
    if (x1 <= x0 || y1 <= y0) {
      throw new AppError(
        'invalid_request',
        selector === undefined
          ? 'clip has no area at this device_scale_factor'
          : `selector "${selector.slice(0, 200)}" matched an element with no visible box`,
      );
    }
    const fit = fitImage(x1 - x0, y1 - y0, bounds);
    const clip = deviceClip(x0, y0, fit.width, fit.height, dsf);
    if (settles(o)) {
      this.phase = 'waiting for fonts and images';
      await this.#networkQuiet(run);
      await run.step(
        inIsolatedWorld(this.#page, waitForPaintReady, {
          top: clip.y,
          bottom: clip.y + clip.height,
          budgetMs: PAINT_READY_BUDGET_MS,
        }),
      );
    }
    return { bounds, clip, beyondViewport: true, truncated: fit.truncated };
  }

  async #frameFullPage(
    o: RenderOptions,
    run: CaptureRun,
    bounds: ImageBounds,
  ): Promise<ImageFrame> {
    const dsf = o.deviceScaleFactor;
    const settle = settles(o);
    const viewportWidth = Math.round(o.width * dsf);
    // The tallest image the bounds allow at this width: no need to scroll beyond it.
    const maxCss = fitImage(viewportWidth, Number.MAX_SAFE_INTEGER, bounds).height / dsf;
    this.phase = 'scrolling through the page';
    await run.step(inIsolatedWorld(this.#page, expandInnerScroller));
    await run.step(
      inIsolatedWorld(this.#page, scrollThrough, {
        maxHeight: maxCss,
        budgetMs: FULL_PAGE_SCROLL_BUDGET_MS,
        pauseMs: SCROLL_STEP_PAUSE_MS,
      }),
    );
    this.phase = 'waiting for fonts and images';
    if (settle) await this.#networkQuiet(run);
    const docHeight = pageNumber(
      await run.step(
        inIsolatedWorld(this.#page, waitForPaintReady, {
          top: 0,
          bottom: maxCss,
          budgetMs: settle ? PAINT_READY_BUDGET_MS : 0,
        }),
      ),
      'document height',
    );
    const deviceHeight = Math.max(Math.round(o.height * dsf), Math.round(docHeight * dsf));
    const fit = fitImage(viewportWidth, deviceHeight, bounds);
    // Only the clip is rendered beyond the viewport (captureBeyondViewport): the viewport
    // itself keeps its size, so `100vh` sections stay the viewport's height and fixed or
    // sticky elements are laid out once, where they sit, instead of growing with the
    // document as they would if the viewport were resized to the page's height.
    const clip = deviceClip(0, 0, fit.width, fit.height, dsf);
    return { bounds, clip, beyondViewport: true, truncated: fit.truncated };
  }

  async #frameViewport(
    o: RenderOptions,
    run: CaptureRun,
    bounds: ImageBounds,
    paintReady: EarlyPaintReady | null,
  ): Promise<ImageFrame> {
    const dsf = o.deviceScaleFactor;
    this.phase = 'waiting for fonts and images';
    if (settles(o) && !(await paintReady?.valid())) {
      await run.step(
        inIsolatedWorld(this.#page, waitForPaintReady, {
          top: 0,
          bottom: o.height,
          budgetMs: PAINT_READY_BUDGET_MS,
          fromScroll: true,
        }),
      );
    }
    // A large viewport at a high scale (Pro: 3840 x 2160 at 3) can pass the pixel budget.
    const fit = fitImage(Math.round(o.width * dsf), Math.round(o.height * dsf), bounds);
    if (!fit.truncated) return { bounds, clip: undefined, beyondViewport: false, truncated: false };
    const clip = deviceClip(0, 0, fit.width, fit.height, dsf);
    return { bounds, clip, beyondViewport: false, truncated: true };
  }

  /** Page.captureScreenshot of the frame, its header read back and held to the bounds. */
  async #screenshot(
    o: RenderOptions,
    run: CaptureRun,
    frame: ImageFrame,
  ): Promise<Omit<CaptureOutput, 'truncated' | 'targetStatus' | 'metadata'>> {
    this.phase = 'capturing the image';
    const shot = await run.step(
      this.#cdp.send(
        'Page.captureScreenshot',
        {
          ...encoderSettings(o.format === 'pdf' ? 'png' : o.format, o.quality),
          captureBeyondViewport: frame.beyondViewport,
          ...(frame.clip ? { clip: frame.clip } : {}),
        },
        // A full-size image can take longer than the default bound on a busy machine; the
        // capture's deadline still ends it.
        { timeout: SCREENSHOT_COMMAND_TIMEOUT_MS },
      ),
    );
    const image = Buffer.from(shot.data, 'base64');
    const size = imageSize(image);
    if (size === null || size.format !== o.format) {
      throw new AppError('internal_error', `chromium returned an unreadable ${o.format} image`);
    }
    const { bounds } = frame;
    if (
      size.width > bounds.maxWidth ||
      size.height > bounds.maxHeight ||
      size.width * size.height > bounds.maxPixels
    ) {
      throw new AppError(
        'internal_error',
        `chromium returned a ${size.width}x${size.height} image, larger than the bounds`,
      );
    }
    return { image, format: size.format, width: size.width, height: size.height };
  }

  /** Waits until no request has been in flight for the quiet window (at most the cap). */
  async #networkQuiet(run: CaptureRun): Promise<void> {
    const until = performance.now() + (this.#settings.networkQuietCapMs ?? NETWORK_QUIET_CAP_MS);
    for (;;) {
      const now = performance.now();
      const quiet = run.activeAfterLoad ? NETWORK_QUIET_ACTIVE_MS : NETWORK_QUIET_MS;
      const idleFor = run.inflight.size === 0 ? now - run.lastActivity : 0;
      if (idleFor >= quiet || now >= until) return;
      const wait = run.inflight.size === 0 ? quiet - idleFor : 25;
      await sleep(Math.max(5, Math.min(wait, until - now)), run.signal);
    }
  }

  #navigationFailure(err: unknown, url: string, run: CaptureRun): AppError {
    if (isAppError(err)) return err;
    const message = err instanceof Error ? err.message : String(err);
    const code = netErrorCode(message);
    if (run.unsafeRedirect !== null) {
      return new AppError(
        'url_not_allowed',
        `the page was redirected to a ${run.unsafeRedirect}: URL, which is not allowed`,
      );
    }
    if (code !== null) return navigationError(code, url, { download: run.download });
    if (err instanceof TimeoutError) {
      return new AppError('render_timeout', 'the page did not finish loading in time');
    }
    if (this.#broken !== null) return new AppError('internal_error', this.#broken);
    return new AppError('internal_error', 'navigation failed', { cause: err });
  }

  /**
   * Clears everything the last capture could have left for the next one. Throws when it
   * cannot (the caller then throws the context away).
   */
  async reset(): Promise<void> {
    if (!this.usable) throw new Error(this.#broken ?? 'page not usable');
    const work = (async () => {
      await this.#page.goto('about:blank', { waitUntil: 'load', timeout: RESET_TIMEOUT_MS });
      while (this.#pendingKeys.size > 0) await Promise.all([...this.#pendingKeys]);
      if (!this.usable) return;
      const origins = [...this.#origins];
      const keys = [...this.#storageKeys];
      this.#origins.clear();
      this.#storageKeys.clear();
      const cdp = this.#cdp;
      await Promise.all([
        cdp.send('Network.clearBrowserCookies'),
        cdp.send('Network.clearBrowserCache'),
        cdp.send('Page.resetNavigationHistory'),
        this.#page.evaluate(() => {
          window.name = '';
        }),
        ...origins.map((origin) =>
          cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' }),
        ),
        ...keys.map((storageKey) =>
          cdp.send('Storage.clearDataForStorageKey', { storageKey, storageTypes: 'all' }),
        ),
      ]);
    })();
    const outcome = await withTimeout(work, RESET_TIMEOUT_MS, 'timeout' as const);
    if (outcome === 'timeout') throw new Error('reset timed out');
    if (!this.usable) throw new Error(this.#broken ?? 'page not usable');
  }

  /**
   * Closes the context and its renderer processes. Resolves false when that did not finish in
   * time (the browser is then suspect and should be replaced).
   */
  dispose(): Promise<boolean> {
    this.#disposed ??= (async () => {
      // A renderer stuck in a script (`while(true){}`) still honours this: V8 termination is
      // requested off the main thread.
      await withTimeout(this.#cdp.send('Runtime.terminateExecution').catch(noop), 500, undefined);
      const closed = await withTimeout(
        this.#context.close().then(() => true),
        DISPOSE_TIMEOUT_MS,
        false,
      ).catch(() => !this.instance.browser.connected);
      this.instance.pageClosed();
      return closed;
    })();
    return this.#disposed;
  }
}
