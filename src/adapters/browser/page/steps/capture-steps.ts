/**
 * The capture's fixed steps up to the image, each on the capture in progress (CaptureRun):
 * the emulation set before loading, the options' selectors checked, the navigation, the
 * options' waits after loading, the metadata read, and the page made still for the capture.
 * Each option's own part comes from its entry in OPTION_STEPS (option-steps.ts); the rest
 * reads the options directly. The image itself is framing.ts, a PDF pdf.ts.
 */
import { type HTTPResponse, type Page, TimeoutError } from 'puppeteer-core';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type {
  PageMetadata,
  RenderOptions,
  WaitUntil,
} from '../../../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../../../domain/errors.ts';
import { sleep } from '../../../../lib/abort.ts';
import type { Presentation } from '../../process/engine.ts';
import type { CaptureRun } from '../capture-run.ts';
import {
  type CaptureState,
  firstInvalidSelector,
  freezeAndHide,
  readMetadata,
} from '../in-page/page-scripts.ts';
import {
  inIsolatedWorld,
  pageCaptureState,
  pageChoice,
  pageMetadata,
} from '../in-page/page-values.ts';
import { navigationError, netErrorCode } from '../network/net-errors.ts';
import type { EmulationSender } from './emulation-state.ts';
import { optionSteps } from './option-steps.ts';

/**
 * A navigation aborted by Chromium (ERR_ABORTED): how long to wait for the raw headers that
 * show whether a redirect to a non-http(s) URL caused it. Only this failure path waits.
 */
const ABORTED_REDIRECT_GRACE_MS = 1_000;

const PUPPETEER_WAIT: Record<
  WaitUntil,
  'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2'
> = {
  load: 'load',
  domcontentloaded: 'domcontentloaded',
  networkidle0: 'networkidle0',
  networkidle2: 'networkidle2',
};

/**
 * The viewport and every option's emulation, set for each capture through the page's standing
 * state (emulation-state.ts: what is already in place is not sent again): the commands, for
 * the caller to send together with the capture's request filter and document scripts.
 */
export function emulation(
  o: RenderOptions,
  state: EmulationSender,
  presentation: Presentation | null,
): (Promise<unknown> | undefined)[] {
  return [
    viewport(o, state),
    // One call for the media type and features: each call of this command replaces both.
    state.send('Emulation.setEmulatedMedia', {
      media: optionSteps.map((s) => s.mediaType?.(o) ?? '').find((m) => m !== '') ?? '',
      features: optionSteps.flatMap((s) => s.mediaFeatures?.(o) ?? []),
    }),
    ...optionSteps.map((s) => s.emulate?.(state, o, presentation)),
  ];
}

function viewport(o: RenderOptions, state: EmulationSender): Promise<unknown> {
  // Device metrics and the screenshot go through the same session: a captureScreenshot on
  // a session without its own override renders at scale 1.
  return state.send('Emulation.setDeviceMetricsOverride', {
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

/** The options' scripts run in every document of a capture (OptionStep.documentScript). */
export class DocumentScripts {
  readonly #page: Page;
  /** Those of the capture in progress (or the last one). */
  #ids: string[] = [];

  constructor(page: Page) {
    this.#page = page;
  }

  /** The last capture's document scripts removed, this one's added (before it loads). */
  async set(o: RenderOptions): Promise<void> {
    const old = this.#ids;
    this.#ids = [];
    await Promise.all(old.map((id) => this.#page.removeScriptToEvaluateOnNewDocument(id)));
    const sources = optionSteps
      .map((s) => s.documentScript?.(o) ?? null)
      .filter((source): source is string => source !== null);
    for (const source of sources) {
      const { identifier } = await this.#page.evaluateOnNewDocument(source);
      this.#ids.push(identifier);
    }
  }
}

/** Every CSS selector the options use is checked by the page's own parser, before loading. */
export async function checkSelectors(run: CaptureRun, o: RenderOptions): Promise<void> {
  const selectors = optionSteps
    .flatMap((s) => s.selectors?.(o) ?? [])
    .filter((s): s is string => s !== null);
  if (selectors.length === 0) return;
  const bad = pageChoice(
    await run.step(inIsolatedWorld(run.page, firstInvalidSelector, selectors)),
    selectors,
    'selector check',
  );
  if (bad !== null) {
    throw new AppError('invalid_request', `"${bad.slice(0, 200)}" is not a valid CSS selector`);
  }
}

/** Navigates to the URL; resolves the target's HTTP status (null when there was none). */
export async function load(run: CaptureRun, o: RenderOptions): Promise<number | null> {
  const signal = run.signal;
  run.enter('navigation', 'loading the page');
  let response: HTTPResponse | null;
  try {
    response = await run.step(
      run.page.goto(o.url, { waitUntil: PUPPETEER_WAIT[o.waitUntil], timeout: 0, signal }),
    );
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    // A refused redirect hop explains a failed navigation better than the net error does.
    await run.settleChecks();
    if (netErrorCode(String(err)) === 'ERR_ABORTED' && run.download === null) {
      // The raw headers of the redirect come from the network service and may trail the
      // failure: a few ms on a quiet machine, more on a loaded one (seen in a suite run).
      const until = performance.now() + ABORTED_REDIRECT_GRACE_MS;
      while (run.unsafeRedirect === null && performance.now() < until) await sleep(20, signal);
    }
    throw navigationFailure(err, o.url, run);
  }
  run.navigationFinished();
  await run.settleChecks();
  return (response ?? run.mainResponse)?.status() ?? null;
}

/**
 * Why the navigation failed, as the API says it. A page that crashed or was closed meanwhile
 * has already ended the run with its own reason (CapturePage), which the caller throws instead.
 */
function navigationFailure(err: unknown, url: string, run: CaptureRun): AppError {
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
  if (err instanceof TimeoutError) return run.timeoutError();
  return new AppError('internal_error', 'navigation failed', { cause: err });
}

/** The options' waits once the page has loaded (selector, network, delay), in table order. */
export async function waitAfterLoad(run: CaptureRun, o: RenderOptions): Promise<void> {
  for (const { afterLoad } of optionSteps) {
    const phase = afterLoad?.phase(o) ?? null;
    if (afterLoad === undefined || phase === null) continue;
    run.enter(afterLoad.kind, phase);
    await afterLoad.run(run, o);
  }
}

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

/** `metadata`: read once the page has settled and its actions ran, before the capture. */
export async function metadata(
  run: CaptureRun,
  o: RenderOptions,
  httpStatus: number | null,
): Promise<PageMetadata> {
  run.enter('capture', 'reading the page metadata');
  const read = pageMetadata(
    await run.step(
      inIsolatedWorld(run.page, readMetadata, {
        maxText: BOUNDS.capture.maxMetadataText,
        maxUrl: BOUNDS.capture.urlMaxLength,
        maxRaw: BOUNDS.capture.pageValueMaxChars,
      }),
    ),
  );
  return { ...read, final_url: finalUrl(run.page.url(), run, o), http_status: httpStatus };
}

/** Animations frozen, `hide_selectors` hidden; what the page's warnings are made of. */
export async function prepareCapture(run: CaptureRun, o: RenderOptions): Promise<CaptureState> {
  run.enter('capture', 'preparing the capture');
  const args = { hide: o.hideSelectors, consent: o.blockCookieBanners };
  return pageCaptureState(await run.step(inIsolatedWorld(run.page, freezeAndHide, args)));
}
