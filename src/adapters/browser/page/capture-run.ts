/**
 * One capture in progress on a page: the steps' handle on the page (the page, our CDP session
 * on it, the renderer's settings), what the page's network is doing (fed by network-watch.ts),
 * the navigation checks still pending, the phase a timeout reports, and the run's end
 * (deadline, abort, crash, a refused navigation), which every step races. One object per
 * capture; it is also what the options' after-load steps get (StepPage). Its state is its own:
 * the network watch and the steps tell it what happened (requestStarted, markDownload, ...)
 * and read back only what they use.
 */
import type { CDPSession, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import type { RenderSettings } from '../../../config/config.ts';
import {
  MAX_PENDING_NAMED,
  type RenderPhase,
  type RenderResult,
  type RenderTimeoutDetails,
} from '../../../domain/captures/renderer.ts';
import { AppError } from '../../../domain/errors.ts';
import { noop, raceAbort, sleep } from '../../../lib/abort.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { FilterLists } from './network/filter-lists.ts';

/**
 * After loading, the page counts as settled once no request has been in flight for this long
 * (requests still running at the load event are always waited for, up to the cap)...
 */
export const NETWORK_QUIET_MS = 50;
/** ...or this long once the page has started requests of its own after the load event. */
export const NETWORK_QUIET_ACTIVE_MS = 250;
/** ...but the settle wait never lasts longer than this (long-polling, analytics beacons). */
export const NETWORK_QUIET_CAP_MS = 2_000;
/**
 * The part of the short window a plain image capture waits before it is taken; the rest is
 * waited while Chromium draws it, and the image is kept only if the network stayed quiet
 * through the whole window (quietHeld). A still page no longer pays the window idle.
 */
export const NETWORK_QUIET_EARLY_MS = 15;

/**
 * How a navigation is checked: `resolve` false on a lane whose proxy resolves names itself
 * (`remote_dns`: docs/proxies.md), where only what is known without DNS is judged here.
 */
export interface NavigationCheck {
  resolve: boolean;
}

export interface CaptureSettings {
  /**
   * The render settings the page applies, as the config parses them (config/config.ts): the
   * height and pixels an image is cut to (`truncated: true`), the resident memory a renderer
   * may hold (one over it is killed, its capture a 500), the wait for the page at rest.
   */
  render: Pick<
    RenderSettings,
    'maxPageHeight' | 'maxImagePixels' | 'rendererMaxMemoryBytes' | 'settleMaxMs'
  >;
  logger: Logger;
  /** Called for every main-frame document request (each redirect hop too); throws to refuse. */
  checkNavigation?: (url: URL, how: NavigationCheck) => Promise<void>;
  /** The shipped filter lists (`block_ads`, `block_trackers`); without them those are 500s. */
  filterLists?: FilterLists;
  /** The settle wait's cap (NETWORK_QUIET_CAP_MS); tests raise it to see a stuck request. */
  networkQuietCapMs: number;
}

export type CaptureOutput = Omit<RenderResult, 'renderMs'>;

/** What an after-load wait may use of the capture in progress (OptionStep.afterLoad). */
export interface StepPage {
  readonly page: Page;
  readonly signal: AbortSignal;
  /** Races a promise with the capture's end (deadline, abort, crash). */
  step<T>(promise: Promise<T>): Promise<T>;
  /** Until no request has been in flight for a moment (bounded: NETWORK_QUIET_CAP_MS). */
  networkQuiet(): Promise<void>;
  /**
   * networkQuiet, except that on a page fetching nothing since load it returns after
   * NETWORK_QUIET_EARLY_MS and leaves the rest of the window owed (quietHeld, networkQuiet).
   */
  networkQuietEarly(): Promise<void>;
  /** The shipped filter lists (null: this renderer has none). */
  readonly lists: FilterLists | null;
}

/**
 * How the main document answered when Chromium does not display it: as an attachment, or as
 * a PDF (which the headless shell, with no PDF viewer, turns into a download).
 */
export type DownloadKind = 'attachment' | 'pdf';

export class CaptureRun implements StepPage {
  readonly page: Page;
  /** Our own session on the page: device metrics and the screenshot go through it. */
  readonly cdp: CDPSession;
  readonly settings: CaptureSettings;
  /**
   * A document capture's address (`html`, `markdown`): its main-frame navigation is answered
   * with the document by the browser (interception.ts), never fetched, so never checked.
   */
  readonly documentUrl: string | null;
  readonly #controller = new AbortController();
  /** What the capture is doing, in words and as the phase a timeout names (enter()). */
  #phase = 'starting';
  #phaseKind: RenderPhase = 'browser';
  /**
   * Requests in flight, by their network request id (not by puppeteer's object): with request
   * interception on, Chromium pauses a web font twice and puppeteer makes a second request
   * object that never gets its finished event (puppeteer issue 11641); by id, the first one's
   * event ends both, where the object kept the settle wait open until its cap. The request is
   * kept for a timeout to name (its URL is read only then).
   */
  readonly #inflight = new Map<string, HTTPRequest>();
  /** The main frame's load event has fired (a wait past it is for the network). */
  #loadFired = false;
  #lastActivity = performance.now();
  /** When the main navigation finished (the wait_until event), null before. */
  #loadedAt: number | null = null;
  /**
   * The page fetches on its own: a request was still in flight when the load event fired (its
   * handlers start requests before Chromium reports the event), or one started after loadedAt.
   */
  #activeAfterLoad = false;
  /** networkQuietEarly returned before the quiet window was over: quietHeld checks the rest. */
  #quietOwed = false;
  /** Last main-frame document response (redirect hops included, final one last). */
  #mainResponse: HTTPResponse | null = null;
  /** The main document was not displayed but denied as a download, and why; null: displayed. */
  #download: DownloadKind | null = null;
  /** Scheme of a non-http(s) redirect, which Chromium ends as ERR_ABORTED. */
  #unsafeRedirect: string | null = null;
  /** Navigation checks still pending (settleChecks waits for them). */
  readonly #checks = new Set<Promise<void>>();

  constructor(parts: {
    page: Page;
    cdp: CDPSession;
    settings: CaptureSettings;
    documentUrl: string | null;
  }) {
    this.page = parts.page;
    this.cdp = parts.cdp;
    this.settings = parts.settings;
    this.documentUrl = parts.documentUrl;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get lists(): FilterLists | null {
    return this.settings.filterLists ?? null;
  }

  /** Last main-frame document response (redirect hops included), null before the first. */
  get mainResponse(): HTTPResponse | null {
    return this.#mainResponse;
  }

  /** How the main document was turned into a denied download; null: it was displayed. */
  get download(): DownloadKind | null {
    return this.#download;
  }

  /** Scheme of a non-http(s) redirect of the main document (Chromium aborts it), else null. */
  get unsafeRedirect(): string | null {
    return this.#unsafeRedirect;
  }

  /** Requests in flight now. */
  get inflightCount(): number {
    return this.#inflight.size;
  }

  /**
   * Races a promise with the run's end (deadline, abort, crash, a refused navigation). A bound
   * function: the options' steps take it out of their StepPage.
   */
  readonly step = <T>(promise: Promise<T>): Promise<T> => raceAbort(promise, this.signal);

  /** The capture moves on to `text` (what it is doing, in words), in phase `kind`. */
  enter(kind: RenderPhase, text: string): void {
    this.#phaseKind = kind;
    this.#phase = text;
  }

  /** A request started (network-watch.ts; redirect hops share their id, and one slot). */
  requestStarted(id: string, request: HTTPRequest): void {
    this.#inflight.set(id, request);
    this.#lastActivity = performance.now();
    if (this.#loadedAt !== null) this.#activeAfterLoad = true;
  }

  /** A request finished or failed. */
  requestEnded(id: string): void {
    this.#inflight.delete(id);
    this.#lastActivity = performance.now();
  }

  /** A response arrived: the network is still busy. */
  responseReceived(): void {
    this.#lastActivity = performance.now();
  }

  /** The main document answered (a redirect hop too; the final answer comes last). */
  mainDocumentAnswered(response: HTTPResponse): void {
    this.#mainResponse = response;
  }

  /** The main frame's load event fired; requests still in flight are the page's own. */
  loadEventFired(): void {
    this.#loadFired = true;
    if (this.#inflight.size > 0) this.#activeAfterLoad = true;
  }

  /** The main navigation finished (the wait_until event): later requests are the page's own. */
  navigationFinished(): void {
    this.#loadedAt = performance.now();
  }

  /** The main document answered as something Chromium denies as a download. */
  markDownload(kind: DownloadKind): void {
    this.#download = kind;
  }

  /** A redirect of the main document to a non-http(s) `scheme`, which Chromium aborts. */
  markUnsafeRedirect(scheme: string): void {
    this.#unsafeRedirect = scheme;
  }

  /** A navigation check under way: settleChecks waits for it (a refusal fails the run). */
  addCheck(check: Promise<void>): void {
    this.#checks.add(check);
    check.finally(() => this.#checks.delete(check)).catch(noop);
  }

  /** Whether no request is in flight, and none started or ended, since `at` (performance.now). */
  quietSince(at: number): boolean {
    return this.#inflight.size === 0 && this.#lastActivity <= at;
  }

  /**
   * The first MAX_PENDING_NAMED requests still in flight, each as origin and path: never the
   * query or the fragment, which may hold the page's secrets; a URL of another scheme by its
   * scheme alone.
   */
  pendingRequests(): string[] {
    const names: string[] = [];
    for (const request of this.#inflight.values()) {
      if (names.length === MAX_PENDING_NAMED) break;
      names.push(requestName(request.url()));
    }
    return names;
  }

  /**
   * The phase a timeout names: while loading, `navigation` until the main document has
   * answered (a redirect hop is not its answer), then `load`, and `network` once the load
   * event has fired (wait_until networkidle waits past it).
   */
  timeoutPhase(): RenderPhase {
    if (this.#phaseKind !== 'navigation') return this.#phaseKind;
    const status = this.#mainResponse?.status() ?? null;
    if (status === null || (status >= 300 && status < 400)) return 'navigation';
    return this.#loadFired ? 'network' : 'load';
  }

  /** The 504 of a capture whose deadline passed now: its phase and what is still loading. */
  timeoutError(): AppError {
    const pending = this.pendingRequests();
    const details: RenderTimeoutDetails = { phase: this.timeoutPhase(), pending_requests: pending };
    let message = `render timed out while ${this.#phase} (phase: ${details.phase})`;
    if (this.#inflight.size > 0) {
      const n = this.#inflight.size;
      message += `; ${n} request${n === 1 ? '' : 's'} still loading: ${pending.join(', ')}`;
      if (n > pending.length) message += ', ...';
    }
    return new AppError('render_timeout', message, { body: { ...details } });
  }

  fail(err: unknown): void {
    if (!this.#controller.signal.aborted) this.#controller.abort(err);
  }

  /** Waits for pending navigation checks; a refusal aborts the run. */
  async settleChecks(): Promise<void> {
    while (this.#checks.size > 0) {
      await raceAbort(Promise.all([...this.#checks]), this.signal);
    }
    this.signal.throwIfAborted();
  }

  /** Waits until no request has been in flight for the quiet window (at most the cap). */
  async networkQuiet(): Promise<void> {
    await this.#quietFor(null);
    this.#quietOwed = false;
  }

  async networkQuietEarly(): Promise<void> {
    await this.#quietFor(NETWORK_QUIET_EARLY_MS);
    this.#quietOwed = !this.#activeAfterLoad && this.#idleFor() < NETWORK_QUIET_MS;
  }

  /** Waits out the rest of a quiet window networkQuietEarly left owed, if it did. */
  async payQuiet(): Promise<void> {
    if (this.#quietOwed) await this.networkQuiet();
  }

  /**
   * Whether the network stayed quiet from `since` (performance.now, taken before the image)
   * through the rest of an owed quiet window, waiting that rest out when the image came
   * sooner. False: a request started or ended meanwhile, and the image may predate what it
   * brings (the caller waits for the network again and takes it anew).
   */
  async quietHeld(since: number): Promise<boolean> {
    while (this.#quietOwed) {
      if (!this.quietSince(since) || this.#activeAfterLoad) return false;
      const left = NETWORK_QUIET_MS - this.#idleFor();
      if (left <= 0) this.#quietOwed = false;
      else await sleep(Math.max(5, left), this.signal);
    }
    return true;
  }

  /** ms since the last request started or ended with none in flight; 0 while one is. */
  #idleFor(): number {
    return this.#inflight.size === 0 ? performance.now() - this.#lastActivity : 0;
  }

  /** Until no request for `windowMs` (null: the page's window), at most the cap. */
  async #quietFor(windowMs: number | null): Promise<void> {
    const until = performance.now() + this.settings.networkQuietCapMs;
    for (;;) {
      const now = performance.now();
      const quiet = this.#activeAfterLoad
        ? NETWORK_QUIET_ACTIVE_MS
        : (windowMs ?? NETWORK_QUIET_MS);
      const idleFor = this.#idleFor();
      if (idleFor >= quiet || now >= until) return;
      const wait = this.#inflight.size === 0 ? quiet - idleFor : 25;
      await sleep(Math.max(5, Math.min(wait, until - now)), this.signal);
    }
  }
}

/** The 504 of a capture whose deadline passed before its page was ready (phase `browser`). */
export function startTimeout(doing: string): AppError {
  return new AppError('render_timeout', `render timed out while ${doing} (phase: browser)`, {
    body: { phase: 'browser', pending_requests: [] },
  });
}

/** At most this many characters of one pending request's name. */
const PENDING_NAME_MAX = 200;

function requestName(raw: string): string {
  try {
    const url = new URL(raw);
    const name =
      url.protocol === 'http:' || url.protocol === 'https:'
        ? `${url.origin}${url.pathname}`
        : url.protocol;
    return name.slice(0, PENDING_NAME_MAX);
  } catch {
    return 'an invalid URL';
  }
}
