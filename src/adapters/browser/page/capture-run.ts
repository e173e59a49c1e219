/**
 * One capture in progress on a page: the steps' handle on the page (the page, our CDP session
 * on it, the renderer's settings), what the page's network is doing (fed by network-watch.ts),
 * the navigation checks still pending, the phase a timeout reports, and the run's end
 * (deadline, abort, crash, a refused navigation), which every step races. One object per
 * capture; it is also what the options' after-load steps get (StepPage).
 */
import type { CDPSession, HTTPRequest, HTTPResponse, Page } from 'puppeteer-core';
import {
  MAX_PENDING_NAMED,
  type RenderPhase,
  type RenderResult,
  type RenderTimeoutDetails,
} from '../../../domain/captures/renderer.ts';
import { AppError } from '../../../domain/errors.ts';
import type { Logger } from '../../../lib/logger.ts';
import { raceAbort, sleep } from '../process/abort.ts';
import type { FilterLists } from './filter-lists.ts';
import type { StepPage } from './option-steps.ts';

/**
 * After loading, the page counts as settled once no request has been in flight for this long
 * (requests still running at the load event are always waited for, up to the cap)...
 */
export const NETWORK_QUIET_MS = 50;
/** ...or this long once the page has started requests of its own after the load event. */
export const NETWORK_QUIET_ACTIVE_MS = 250;
/** ...but the settle wait never lasts longer than this (long-polling, analytics beacons). */
export const NETWORK_QUIET_CAP_MS = 2_000;

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
  /** The wait for the page at rest, at most (SETTLE_MAX_MS); 0: no wait. */
  settleMaxMs?: number;
}

export type CaptureOutput = Omit<RenderResult, 'renderMs'>;

export class CaptureRun implements StepPage {
  readonly page: Page;
  /** Our own session on the page: device metrics and the screenshot go through it. */
  readonly cdp: CDPSession;
  readonly settings: CaptureSettings;
  /** What the capture is doing, in words and as the phase a timeout names (enter()). */
  phase = 'starting';
  phaseKind: RenderPhase = 'browser';
  readonly controller = new AbortController();
  /**
   * Requests in flight, by their network request id (not by puppeteer's object): with request
   * interception on, Chromium pauses a web font twice and puppeteer makes a second request
   * object that never gets its finished event (puppeteer issue 11641); by id, the first one's
   * event ends both, where the object kept the settle wait open until its cap. The request is
   * kept for a timeout to name (its URL is read only then).
   */
  readonly inflight = new Map<string, HTTPRequest>();
  /** The main frame's load event has fired (a wait past it is for the network). */
  loadFired = false;
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
  /**
   * The main document answered as an attachment, or as a PDF (which the headless shell, with
   * no PDF viewer, turns into a download): Chromium denies the download and aborts; null for a
   * document it displays.
   */
  download: 'attachment' | 'pdf' | null = null;
  /** Scheme of a non-http(s) redirect, which Chromium ends as ERR_ABORTED. */
  unsafeRedirect: string | null = null;
  readonly checks = new Set<Promise<void>>();
  /**
   * A document capture's address (`html`, `markdown`): its main-frame navigation is answered
   * with the document by the browser (interception.ts), never fetched, so never checked.
   */
  documentUrl: string | null = null;

  constructor(page: Page, cdp: CDPSession, settings: CaptureSettings) {
    this.page = page;
    this.cdp = cdp;
    this.settings = settings;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get lists(): FilterLists | null {
    return this.settings.filterLists ?? null;
  }

  /**
   * Races a promise with the run's end (deadline, abort, crash, a refused navigation). A bound
   * function: the options' steps take it out of their StepPage.
   */
  readonly step = <T>(promise: Promise<T>): Promise<T> => raceAbort(promise, this.signal);

  /** The capture moves on to `text` (what it is doing, in words), in phase `kind`. */
  enter(kind: RenderPhase, text: string): void {
    this.phaseKind = kind;
    this.phase = text;
  }

  /**
   * The phase a timeout names: while loading, `navigation` until the main document has
   * answered (a redirect hop is not its answer), then `load`, and `network` once the load
   * event has fired (wait_until networkidle waits past it).
   */
  timeoutPhase(): RenderPhase {
    if (this.phaseKind !== 'navigation') return this.phaseKind;
    const status = this.mainResponse?.status() ?? null;
    if (status === null || (status >= 300 && status < 400)) return 'navigation';
    return this.loadFired ? 'network' : 'load';
  }

  /** The 504 of a capture whose deadline passed now: its phase and what is still loading. */
  timeoutError(): AppError {
    const pending = pendingRequests(this.inflight.values());
    const details: RenderTimeoutDetails = { phase: this.timeoutPhase(), pending_requests: pending };
    let message = `render timed out while ${this.phase} (phase: ${details.phase})`;
    if (this.inflight.size > 0) {
      const n = this.inflight.size;
      message += `; ${n} request${n === 1 ? '' : 's'} still loading: ${pending.join(', ')}`;
      if (n > pending.length) message += ', ...';
    }
    return new AppError('render_timeout', message, { body: { ...details } });
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

  /** Waits until no request has been in flight for the quiet window (at most the cap). */
  async networkQuiet(): Promise<void> {
    const until = performance.now() + (this.settings.networkQuietCapMs ?? NETWORK_QUIET_CAP_MS);
    for (;;) {
      const now = performance.now();
      const quiet = this.activeAfterLoad ? NETWORK_QUIET_ACTIVE_MS : NETWORK_QUIET_MS;
      const idleFor = this.inflight.size === 0 ? now - this.lastActivity : 0;
      if (idleFor >= quiet || now >= until) return;
      const wait = this.inflight.size === 0 ? quiet - idleFor : 25;
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

/**
 * The first MAX_PENDING_NAMED requests, each as origin and path: never the query or the
 * fragment, which may hold the page's secrets; a URL of another scheme by its scheme alone.
 */
export function pendingRequests(requests: Iterable<HTTPRequest>): string[] {
  const names: string[] = [];
  for (const request of requests) {
    if (names.length === MAX_PENDING_NAMED) break;
    names.push(requestName(request.url()));
  }
  return names;
}

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
