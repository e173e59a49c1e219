/**
 * One capture in progress on a page: the steps' handle on the page (the page, our CDP session
 * on it, the renderer's settings), what the page's network is doing (fed by network-watch.ts),
 * the navigation checks still pending, the phase a timeout reports, and the run's end
 * (deadline, abort, crash, a refused navigation), which every step races. One object per
 * capture; it is also what the options' after-load steps get (StepPage).
 */
import type { CDPSession, HTTPResponse, Page } from 'puppeteer-core';
import type { RenderResult } from '../../../domain/captures/renderer.ts';
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
}

export type CaptureOutput = Omit<RenderResult, 'renderMs'>;

export class CaptureRun implements StepPage {
  readonly page: Page;
  /** Our own session on the page: device metrics and the screenshot go through it. */
  readonly cdp: CDPSession;
  readonly settings: CaptureSettings;
  /** What the capture is doing, for timeout messages. */
  phase = 'starting';
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
