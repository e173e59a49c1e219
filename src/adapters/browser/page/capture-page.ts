/**
 * One worker slot's browser context and page, reused across captures. Isolation without a
 * fresh page per capture: after each capture the context is cleared (context-reset.ts), and
 * each capture sets the whole emulation state (viewport, scale, media features, background)
 * anew. The context itself is thrown away every `recycleAfter` captures and after any failure.
 *
 * What no clearing reaches (the context's HTTP authentication cache, HSTS and alt-svc state,
 * its open sockets) is kept from other accounts by never sharing a context: a page records the
 * client it rendered for and refuses any other client's capture.
 *
 * This class holds the page's parts together and runs a capture's steps in order over them:
 * the network watch and the request interception, fed by the page's events; the steps on the
 * capture in progress (capture-run.ts): capture-steps.ts up to the image, then framing.ts or
 * pdf.ts; the reset between captures; the close.
 */
import type { BrowserContext, CDPSession, Page } from 'puppeteer-core';
import type { RenderOptions } from '../../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../../domain/errors.ts';
import { noop, withTimeout } from '../../../lib/abort.ts';
import type { Lane } from '../../egress/proxy.ts';
import type { BrowserInstance, ContextPage } from '../process/browser-instance.ts';
import { type MemoryWatchdog, watchdogFor } from '../process/memory-watchdog.ts';
import {
  type CaptureOutput,
  CaptureRun,
  type CaptureSettings,
  startTimeout,
} from './capture-run.ts';
import { ContextReset, RESET_TIMEOUT_MS } from './context-reset.ts';
import { ACTIVITY_PROBE_ARGS, activityProbe } from './in-page/activity-probe.ts';
import { blockServiceWorkers } from './in-page/page-scripts.ts';
import { documentAddress, RequestInterception } from './network/interception.ts';
import { NetworkWatch } from './network/network-watch.ts';
import { captureWarnings } from './output/capture-warnings.ts';
import { earlyPaintReady, frame, screenshot } from './output/framing.ts';
import { readContent } from './output/page-content.ts';
import { printPdf } from './output/pdf.ts';
import {
  checkSelectors,
  DocumentScripts,
  emulation,
  load,
  metadata,
  prepareCapture,
  waitAfterLoad,
} from './steps/capture-steps.ts';
import { EmulationState } from './steps/emulation-state.ts';
import { settle } from './steps/settle.ts';

export type { CaptureOutput, CaptureSettings } from './capture-run.ts';

/** Closing a context (and its renderer processes) must finish within this. */
const DISPOSE_TIMEOUT_MS = 5_000;

export class CapturePage {
  readonly instance: BrowserInstance;
  /** Captures started on this context. */
  captures = 0;
  /** The client this context has rendered for (RenderClient id); null while never used. */
  client: string | null = null;
  readonly #context: BrowserContext;
  readonly #page: Page;
  readonly #cdp: CDPSession;
  readonly #settings: CaptureSettings;
  readonly #watchdog: MemoryWatchdog;
  readonly #leftovers: ContextReset;
  readonly #network: NetworkWatch;
  readonly #requests: RequestInterception;
  readonly #documentScripts: DocumentScripts;
  readonly #emulation: EmulationState;
  #run: CaptureRun | null = null;
  #broken: string | null = null;
  #disposed: Promise<boolean> | null = null;
  /** Where this context's traffic goes out (docs/proxies.md); null: the egress proxy itself. */
  readonly lane: Lane | null;
  /** Whether the context grants geolocation now (denied when made). */
  #geolocation = false;

  private constructor(
    instance: BrowserInstance,
    parts: { context: BrowserContext; page: Page; cdp: CDPSession; lane: Lane | null },
    settings: CaptureSettings,
  ) {
    this.instance = instance;
    this.lane = parts.lane;
    this.#context = parts.context;
    this.#page = parts.page;
    this.#cdp = parts.cdp;
    this.#settings = settings;
    this.#watchdog = watchdogFor(instance, {
      limitBytes: settings.render.rendererMaxMemoryBytes,
      logger: settings.logger,
    });
    this.#leftovers = new ContextReset(parts.page, parts.cdp);
    const check = settings.checkNavigation;
    const how = { resolve: parts.lane?.remoteDns !== true };
    this.#network = new NetworkWatch(
      parts.page,
      check && ((url: URL) => check(url, how)),
      () => this.#run,
    );
    this.#requests = new RequestInterception({
      page: parts.page,
      cdp: parts.cdp,
      lists: settings.filterLists,
      engine: instance.engine,
    });
    this.#documentScripts = new DocumentScripts(parts.page);
    this.#emulation = new EmulationState(parts.cdp, parts.page);
  }

  /** A new context and its page; `lane`: its own way out, closed with it. */
  static async create(
    instance: BrowserInstance,
    settings: CaptureSettings,
    lane: Lane | null = null,
  ): Promise<CapturePage> {
    let parts: ContextPage;
    try {
      parts = await instance.newContextPage(lane?.url ?? null);
    } catch (err) {
      await lane?.close();
      throw err;
    }
    const page = new CapturePage(instance, { ...parts, lane }, settings);
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
    return (
      this.#broken === null && this.#disposed === null && this.#leftovers.replaceReason === null
    );
  }

  /** The 504 of the capture in progress, whose deadline has just passed. */
  timeoutError(): AppError {
    return this.#run?.timeoutError() ?? startTimeout('starting the page');
  }

  async #setup(): Promise<void> {
    const page = this.#page;
    page.on('dialog', (dialog) => {
      dialog.dismiss().catch(noop);
    });
    page.on('request', (request) => {
      this.#leftovers.noteOrigin(request.url());
      this.#requests.answer(request);
      this.#network.requestStarted(request);
    });
    page.on('requestfinished', (request) => this.#network.requestDone(request));
    page.on('requestfailed', (request) => this.#network.requestDone(request));
    page.on('response', (response) => this.#network.responded(response));
    page.on('load', () => this.#network.loaded());
    page.on('framenavigated', (navigated) => {
      this.#leftovers.noteOrigin(navigated.url());
      if (navigated !== page.mainFrame()) this.#leftovers.noteStorageKey(navigated);
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
    await Promise.all([
      page.setBypassServiceWorker(true),
      page.evaluateOnNewDocument(blockServiceWorkers),
      page.evaluateOnNewDocument(activityProbe, ACTIVITY_PROBE_ARGS),
      this.#requests.start(),
    ]);
  }

  #markBroken(reason: string): void {
    this.#broken ??= reason;
    this.#run?.fail(new AppError('internal_error', reason));
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
    const run = new CaptureRun({
      page: this.#page,
      cdp: this.#cdp,
      settings: this.#settings,
      documentUrl: documentAddress(options),
    });
    const forward = (): void => run.fail(signal.reason);
    signal.addEventListener('abort', forward, { once: true });
    this.#run = run;
    this.client = client;
    this.captures++;
    try {
      return await this.#capture(options, run);
    } catch (err) {
      throw proxyFailure(this.lane, run.signal.aborted ? run.signal.reason : err);
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
    run.enter('browser', 'preparing the page');
    if (o.omitBackground && o.format !== 'jpeg') {
      // Clearing Chromium's background override does not make this page's view opaque again
      // (Chromium 156: the next capture on the page came out transparent), so the page is
      // not used again: its context is closed after this capture.
      this.#leftovers.replaceInstead('transparent background');
    }
    this.lane?.takeFailure();
    const granted = o.geolocation !== null;
    if (granted !== this.#geolocation) {
      await run.step(this.instance.setGeolocation(this.#context, granted));
      this.#geolocation = granted;
    }
    await run.step(
      Promise.all([
        ...emulation(o, this.#emulation, this.instance.presentation),
        this.#requests.apply(o),
        this.#documentScripts.set(o),
      ]),
    );
    await checkSelectors(run, o);
    const targetStatus = await load(run, o);
    if (o.failOnHttpError && targetStatus !== null && targetStatus >= 400) {
      throw new AppError(
        'target_error',
        `the target answered HTTP ${targetStatus} (fail_on_http_error is set)`,
      );
    }
    const paintReady = earlyPaintReady(run, o);
    await waitAfterLoad(run, o);
    let rest = await settle(run, o, this.#settings.render.settleMaxMs);
    // What is read besides an image is read once the network's quiet window is over.
    if (o.format === 'pdf' || o.metadata || o.content.length > 0) await run.payQuiet();
    const meta = o.metadata ? await metadata(run, o, targetStatus) : null;
    // The page at rest, before the capture freezes or hides anything in it.
    const content = await readContent(run, o);
    const state = await prepareCapture(run, o);
    const read = { targetStatus, metadata: meta, content, settleMs: rest.waitedMs };
    if (o.format === 'pdf') {
      const pdf = await printPdf(run, o);
      // A single-page PDF lays the page out at the paper's width with print media.
      this.#emulation.forget();
      const warnings = await captureWarnings(run, o, { state, rest }, pdf, null);
      return { ...pdf, warnings, ...read };
    }
    let framed = await frame(run, o, paintReady);
    await run.settleChecks();
    const taken = performance.now();
    let image = await screenshot(run, o, framed);
    if (!(await run.quietHeld(taken))) {
      // A request started or ended while the image was taken, before the network's quiet
      // window was over: what it brings may be missing. Settled again, and taken anew.
      run.enter('network', 'waiting for the network to settle');
      await run.networkQuiet();
      const again = await settle(run, o, this.#settings.render.settleMaxMs - rest.waitedMs);
      rest = { ...again, waitedMs: rest.waitedMs + again.waitedMs };
      framed = await frame(run, o, paintReady);
      await run.settleChecks();
      image = await screenshot(run, o, framed);
    }
    const captured = { ...image, truncated: framed.truncated };
    const warnings = await captureWarnings(run, o, { state, rest }, captured, framed);
    return { ...captured, warnings, ...read };
  }

  /**
   * Clears everything the last capture could have left for the next one. Throws when it
   * cannot (the caller then throws the context away).
   */
  async reset(): Promise<void> {
    if (!this.usable) throw new Error(this.#broken ?? 'page not usable');
    const work = this.#leftovers.clear(() => this.usable);
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
      await this.lane?.close();
      return closed;
    })();
    return this.#disposed;
  }
}

/**
 * A capture on a lane whose document could not be reached while its upstream proxy failed
 * (a tunnel the proxy refused, timed out or never opened): the proxy's failure, named (502
 * `proxy_error`), not the target's. A plain-http document's own failure says so itself
 * (network-watch.ts); a timeout keeps its phase and pending requests.
 */
function proxyFailure(lane: Lane | null, err: unknown): unknown {
  if (lane === null || !isAppError(err) || err.code !== 'target_unreachable') return err;
  const failure = lane.takeFailure();
  return failure === null ? err : new AppError('proxy_error', failure, { cause: err });
}
