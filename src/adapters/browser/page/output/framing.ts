/**
 * What part of the page becomes the image (an element, a `clip`, the full page or the
 * viewport), its fonts and images awaited, and Page.captureScreenshot of it. Every image stays
 * within the plan width x scale, the height limit and the pixel budget: the clip is cut before
 * Chromium renders it (image-size.ts), so nothing larger is ever encoded or sent, and the
 * image's own header is read back and held to the same bounds.
 */
import type { Protocol } from 'puppeteer-core';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { RenderOptions } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { CaptureOutput, CaptureRun } from '../capture-run.ts';
import {
  expandInnerScroller,
  SCROLL_REVEAL,
  scrollThrough,
  waitForPaintReady,
} from '../in-page/full-page-scripts.ts';
import { elementBox, layoutWidth, scrollToBox } from '../in-page/page-scripts.ts';
import { inIsolatedWorld, pageBox, pageLayoutWidth, pageNumber } from '../in-page/page-values.ts';
import { OPTION_STEPS, optionSteps, settles } from '../steps/option-steps.ts';
import { encoderSettings } from './encoding.ts';
import { planResize, type ResizePlan, resizedClip, resizeExactly } from './image-resize.ts';
import { fitImage, type ImageBounds, imageSize } from './image-size.ts';
import { drawSlices, joinSlices, needsSlices, sliceRows, type TallFrame } from './tall-image.ts';

/** Full page: time allowed for scrolling through to trigger lazy loading. */
export const FULL_PAGE_SCROLL_BUDGET_MS = 5_000;
/** Full page: pause after each scroll step. */
export const SCROLL_STEP_PAUSE_MS = 40;
/** Fonts and in-view images: longest wait for them to load and decode. */
export const PAINT_READY_BUDGET_MS = 3_000;
/** Page.captureScreenshot's own bound (RENDER_TIMEOUT_MS, at most 300 s, ends it first). */
export const SCREENSHOT_COMMAND_TIMEOUT_MS = 300_000;

/** The wait for fonts and images, started early (earlyPaintReady). */
export interface EarlyPaintReady {
  /** Resolves whether it finished and still holds (else it is waited for again). */
  valid(): Promise<boolean>;
}

/** The part of the page that becomes the image (no clip: the viewport as it is). */
export interface ImageFrame {
  bounds: ImageBounds;
  clip: Protocol.Page.Viewport | undefined;
  beyondViewport: boolean;
  truncated: boolean;
  /** The delivered size (image_width, image_height): the clip already draws at its scale. */
  resize?: ResizePlan;
}

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

/**
 * A viewport capture's wait for fonts and in-view images, started as soon as the page has
 * loaded so that it overlaps the network settle wait instead of following it. It only
 * counts when nothing happened on the network after it started, and it is not started when
 * another after-load step will run (a wait, a delay, a page action): frameViewport waits
 * then. null: no early wait.
 */
export function earlyPaintReady(run: CaptureRun, o: RenderOptions): EarlyPaintReady | null {
  if (!settles(o) || o.fullPage || o.selector !== null || o.clip !== null) return null;
  // Another step after load (a selector wait, a delay, injected styles or scripts, a click,
  // a scroll) may change what is in view: the wait then comes after them.
  const others = optionSteps.filter((s) => s !== OPTION_STEPS.wait_until);
  if (others.some((s) => (s.afterLoad?.phase(o) ?? null) !== null)) return null;
  const startedAt = performance.now();
  const done = inIsolatedWorld(run.page, waitForPaintReady, {
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
      return ok && run.quietSince(startedAt);
    },
  };
}

/**
 * What part of the page becomes the image (an element, `clip`, the full page or the viewport),
 * drawn at the delivered size when the options ask for one.
 */
export async function frame(
  run: CaptureRun,
  o: RenderOptions,
  paintReady: EarlyPaintReady | null,
): Promise<ImageFrame> {
  return resizeFrame(run, o, await framePart(run, o, paintReady));
}

async function framePart(
  run: CaptureRun,
  o: RenderOptions,
  paintReady: EarlyPaintReady | null,
): Promise<ImageFrame> {
  // The width bound in whole device px as Chromium sizes a viewport of the plan's width
  // (rounded: 333 CSS px at 2.5 is 833 device px), so a viewport of that width fits.
  const bounds: ImageBounds = {
    maxWidth: Math.round(o.maxWidth * o.deviceScaleFactor),
    maxHeight: Math.min(run.settings.render.maxPageHeight, formatMaxHeight(o.format)),
    maxPixels: run.settings.render.maxImagePixels,
  };
  if (o.selector !== null) return frameElement(run, o, o.selector, bounds);
  if (o.clip !== null) {
    await run.step(inIsolatedWorld(run.page, scrollToBox, o.clip));
    return frameBox(run, o, o.clip, bounds);
  }
  if (o.fullPage) return frameFullPage(run, o, bounds);
  return frameViewport(run, o, bounds, paintReady);
}

/**
 * The format's own limit on a side: WebP holds at most 16,383 px, libjpeg writes at most
 * 65,500; an image is cut there whatever MAX_PAGE_HEIGHT says.
 */
function formatMaxHeight(format: RenderOptions['format']): number {
  if (format === 'webp') return BOUNDS.browser.webpMaxHeight;
  if (format === 'jpeg') return BOUNDS.browser.jpegMaxHeight;
  return Number.POSITIVE_INFINITY;
}

async function frameElement(
  run: CaptureRun,
  o: RenderOptions,
  selector: string,
  bounds: ImageBounds,
): Promise<ImageFrame> {
  const box = pageBox(await run.step(inIsolatedWorld(run.page, elementBox, selector)));
  if (box === null) {
    throw new AppError(
      'invalid_request',
      `selector "${selector.slice(0, 200)}" matched no element`,
    );
  }
  return frameBox(run, o, box, bounds, selector);
}

/**
 * A box of the page (CSS px of the document: an element's, or `clip`) as the image, cut to
 * the bounds; its fonts and images awaited.
 */
async function frameBox(
  run: CaptureRun,
  o: RenderOptions,
  box: { x: number; y: number; width: number; height: number },
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
    run.enter('capture', 'waiting for fonts and images');
    await run.networkQuiet();
    await run.step(
      inIsolatedWorld(run.page, waitForPaintReady, {
        top: clip.y,
        bottom: clip.y + clip.height,
        budgetMs: PAINT_READY_BUDGET_MS,
      }),
    );
  }
  return { bounds, clip, beyondViewport: true, truncated: fit.truncated };
}

async function frameFullPage(
  run: CaptureRun,
  o: RenderOptions,
  bounds: ImageBounds,
): Promise<ImageFrame> {
  const settle = settles(o);
  const viewportWidth = Math.round(o.width * o.deviceScaleFactor);
  // A phone shows a page without a viewport tag laid out 980 px wide and zoomed out to its
  // screen: the image keeps that zoom (one CSS px is `zoom` of a screen px), where a clip at
  // scale 1 would show the page's left part at full size. Only a mobile capture asks.
  // The zoom a phone settles at: its screen over the layout's width (980 CSS px for a page
  // without a viewport tag). The visual viewport's own scale is no measure of it: while content
  // overflows the layout (an element sliding in from the side), the phone zooms out further
  // for a moment, and a scale read then drew the layout in part of the image.
  const layout = o.mobile
    ? pageLayoutWidth(await run.step(inIsolatedWorld(run.page, layoutWidth)))
    : o.width;
  const scale = Math.min(1, o.width / layout);
  // Device px per CSS px of the document.
  const dsf = o.deviceScaleFactor * scale;
  // The tallest image the bounds allow at this width: no need to scroll beyond it.
  const maxCss = fitImage(viewportWidth, Number.MAX_SAFE_INTEGER, bounds).height / dsf;
  run.enter('capture', 'scrolling through the page');
  await run.step(inIsolatedWorld(run.page, expandInnerScroller));
  await run.step(
    inIsolatedWorld(run.page, scrollThrough, {
      maxHeight: maxCss,
      budgetMs: FULL_PAGE_SCROLL_BUDGET_MS,
      pauseMs: SCROLL_STEP_PAUSE_MS,
      reveal: SCROLL_REVEAL,
    }),
  );
  run.enter('capture', 'waiting for fonts and images');
  if (settle) await run.networkQuiet();
  const docHeight = pageNumber(
    await run.step(
      inIsolatedWorld(run.page, waitForPaintReady, {
        top: 0,
        bottom: maxCss,
        budgetMs: settle ? PAINT_READY_BUDGET_MS : 0,
      }),
    ),
    'document height',
  );
  const deviceHeight = Math.max(
    Math.round(o.height * o.deviceScaleFactor),
    Math.round(docHeight * dsf),
  );
  const fit = fitImage(viewportWidth, deviceHeight, bounds);
  // Only the clip is rendered beyond the viewport (captureBeyondViewport): the viewport
  // itself keeps its size, so `100vh` sections stay the viewport's height and fixed or
  // sticky elements are laid out once, where they sit, instead of growing with the
  // document as they would if the viewport were resized to the page's height.
  const clip = deviceClip(0, 0, fit.width, fit.height, dsf);
  return { bounds, clip: { ...clip, scale }, beyondViewport: true, truncated: fit.truncated };
}

async function frameViewport(
  run: CaptureRun,
  o: RenderOptions,
  bounds: ImageBounds,
  paintReady: EarlyPaintReady | null,
): Promise<ImageFrame> {
  const dsf = o.deviceScaleFactor;
  run.enter('capture', 'waiting for fonts and images');
  if (settles(o) && !(await paintReady?.valid())) {
    await run.step(
      inIsolatedWorld(run.page, waitForPaintReady, {
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
  // The clip is in document coordinates: the cut keeps the top of what the viewport shows,
  // wherever the page is scrolled (`scroll_into_view`, a page's own scroll).
  const { cssVisualViewport: vv } = await run.step(run.cdp.send('Page.getLayoutMetrics'));
  const clip = deviceClip(vv.pageX * dsf, vv.pageY * dsf, fit.width, fit.height, dsf);
  return { bounds, clip, beyondViewport: false, truncated: true };
}

/**
 * The frame drawn at the delivered size (image-resize.ts). A viewport frame has no clip of its
 * own: the visual viewport's box (scrolled, and zoomed out on a phone) is taken as one.
 */
async function resizeFrame(run: CaptureRun, o: RenderOptions, f: ImageFrame): Promise<ImageFrame> {
  if (o.imageWidth === null && o.imageHeight === null) return f;
  const dsf = o.deviceScaleFactor;
  let clip = f.clip;
  if (clip === undefined) {
    const { cssVisualViewport: vv } = await run.step(run.cdp.send('Page.getLayoutMetrics'));
    clip = {
      x: vv.pageX,
      y: vv.pageY,
      width: vv.clientWidth,
      height: vv.clientHeight,
      scale: o.width / vv.clientWidth,
    };
  }
  const source = {
    width: Math.max(1, Math.round(clip.width * clip.scale * dsf)),
    height: Math.max(1, Math.round(clip.height * clip.scale * dsf)),
  };
  const plan = planResize(source, o, f.bounds);
  if (plan === null) return f;
  if (plan.width * plan.height > f.bounds.maxPixels) {
    throw new AppError(
      'invalid_request',
      `image_width x image_height (${plan.width}x${plan.height}) is more than the ` +
        `${f.bounds.maxPixels} pixels an image may have`,
    );
  }
  const drawn = { ...plan, scale: drawableScale(plan, f.bounds) };
  return {
    ...f,
    clip: resizedClip(clip, drawn, dsf),
    truncated: f.truncated || plan.truncated,
    resize: plan,
  };
}

/** A stretch is drawn at its larger scale, as far as the bounds let Chromium draw it. */
function drawableScale(plan: ResizePlan, bounds: ImageBounds): number {
  if (!plan.stretch) return plan.scale;
  const { width, height } = plan.crop;
  return Math.min(
    plan.scale,
    bounds.maxWidth / width,
    bounds.maxHeight / height,
    Math.sqrt(bounds.maxPixels / (width * height)),
  );
}

/**
 * Page.captureScreenshot of the frame (in slices when it is too tall for one piece), its
 * header read back and held to the bounds.
 */
export async function screenshot(
  run: CaptureRun,
  o: RenderOptions,
  frame: ImageFrame,
): Promise<
  Omit<
    CaptureOutput,
    'truncated' | 'targetStatus' | 'metadata' | 'warnings' | 'settleMs' | 'content'
  >
> {
  const tall = tallFrame(o, frame);
  const image =
    tall === null
      ? await screenshotInOnePiece(run, o, frame)
      : await screenshotInSlices(run, o, frame, tall);
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

/** The frame's size in output px when it is drawn in slices (too tall for one piece), else null. */
function tallFrame(o: RenderOptions, frame: ImageFrame): TallFrame | null {
  const clip = frame.clip;
  // A viewport capture is one surface already; only a clip beyond it can be this tall.
  if (clip === undefined || !frame.beyondViewport) return null;
  const pxPerCss = clip.scale * o.deviceScaleFactor;
  const height = Math.round(clip.height * pxPerCss);
  if (!needsSlices(height)) return null;
  return { clip, pxPerCss, width: Math.round(clip.width * pxPerCss), height };
}

/** One Page.captureScreenshot, encoded by Chromium; resized once more only when it must be. */
async function screenshotInOnePiece(
  run: CaptureRun,
  o: RenderOptions,
  frame: ImageFrame,
): Promise<Buffer> {
  const format = o.format === 'pdf' ? 'png' : o.format;
  run.enter('capture', 'capturing the image');
  const shot = await run.step(
    run.cdp.send(
      'Page.captureScreenshot',
      {
        ...encoderSettings(format, o.quality),
        captureBeyondViewport: frame.beyondViewport,
        ...(frame.clip ? { clip: frame.clip } : {}),
      },
      // A full-size image can take longer than the default bound on a busy machine; the
      // capture's deadline still ends it.
      { timeout: SCREENSHOT_COMMAND_TIMEOUT_MS },
    ),
  );
  let image: Buffer = Buffer.from(shot.data, 'base64');
  const resize = frame.resize;
  if (resize !== undefined) {
    const drawn = imageSize(image);
    if (resize.stretch || drawn?.width !== resize.width || drawn?.height !== resize.height) {
      run.enter('capture', 'resizing the image');
      image = await run.step(
        resizeExactly(image, format, o.quality, {
          width: resize.width,
          height: resize.height,
          maxPixels: frame.bounds.maxPixels,
        }),
      );
    }
  }
  return image;
}

/**
 * A frame too tall for one piece (tall-image.ts): drawn in slices, joined, resized to the
 * asked size in the same pass and encoded once.
 */
async function screenshotInSlices(
  run: CaptureRun,
  o: RenderOptions,
  frame: ImageFrame,
  tall: TallFrame,
): Promise<Buffer> {
  const started = performance.now();
  run.enter('capture', 'capturing the image in slices');
  run.settings.logger.debug(
    { slices: sliceRows(tall.height).length, drawnHeight: tall.height },
    'drawing a tall image in slices',
  );
  const slices = await drawSlices(run, tall);
  const drawnMs = performance.now() - started;
  run.enter('capture', 'joining the slices');
  // Raced with the deadline: a capture out of time answers at once, and the join it leaves
  // behind ends by BOUNDS.browser.joinTimeoutSeconds, its slices with it (nothing else holds them).
  const image = await run.step(
    joinSlices(slices, o.format === 'pdf' ? 'png' : o.format, o.quality, {
      width: frame.resize?.width ?? tall.width,
      height: frame.resize?.height ?? tall.height,
      maxPixels: frame.bounds.maxPixels,
    }),
  );
  run.settings.logger.debug(
    {
      slices: slices.length,
      drawnHeight: tall.height,
      drawMs: Math.round(drawnMs),
      joinMs: Math.round(performance.now() - started - drawnMs),
    },
    'tall image drawn in slices and joined',
  );
  return image;
}
