/**
 * The capture's warnings (domain/captures/warnings.ts), found after the image: what was still
 * loading, the fonts and the consent layer freezeAndHide saw, the image's cut, and whether it
 * is one colour. A still page with nothing suspect costs nothing more than the counts already
 * read: another round trip only follows a suspicion (fonts that were loading, an image small
 * enough to be blank).
 */
import type { RenderOptions } from '../../../../domain/captures/renderer.ts';
import type { CaptureWarning } from '../../../../domain/captures/warnings.ts';
import type { CaptureRun } from '../capture-run.ts';
import { type CaptureState, fontsLoading } from '../in-page/page-scripts.ts';
import { inIsolatedWorld, pageNumber } from '../in-page/page-values.ts';
import { type RestOutcome, restWarning } from '../steps/settle.ts';
import {
  blankness,
  MAX_READ_PIXELS,
  mayBeBlank,
  SAMPLE_PIXELS,
  SAMPLE_WIDTH,
} from './blank-image.ts';
import type { ImageFrame } from './framing.ts';

/** A consent layer over less of the viewport than this is not reported (a thin bar's rest). */
const BANNER_MIN_SHARE = 0.05;
/** Pending requests named in the warning's message. */
const PENDING_IN_MESSAGE = 3;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** What is known once the image is taken. */
export interface CapturedImage {
  image: Buffer;
  format: RenderOptions['format'];
  width: number;
  height: number;
  truncated: boolean;
}

export async function captureWarnings(
  run: CaptureRun,
  o: RenderOptions,
  seen: { state: CaptureState; rest: RestOutcome },
  captured: CapturedImage,
  frame: ImageFrame | null,
): Promise<CaptureWarning[]> {
  const { state } = seen;
  const warnings: CaptureWarning[] = [];
  if (captured.format !== 'pdf') {
    const blank = await blankImage(run, o, captured, frame);
    if (blank !== null) warnings.push(blank);
  }
  const rest = restWarning(seen.rest);
  if (rest !== null) warnings.push(rest);
  if (run.inflightCount > 0) {
    const n = run.inflightCount;
    const names = run.pendingRequests().slice(0, PENDING_IN_MESSAGE);
    warnings.push({
      code: 'requests_pending',
      message: `${plural(n, 'request')} still loading at capture: ${names.join(', ')}${n > names.length ? ', ...' : ''}`,
    });
  }
  const loading =
    state.fontsLoading === 0
      ? 0
      : pageNumber(await run.step(inIsolatedWorld(run.page, fontsLoading, 1000)), 'font count');
  if (loading > 0 || state.fontsFailed > 0) {
    const parts = [
      ...(state.fontsFailed > 0 ? [`${plural(state.fontsFailed, 'web font')} failed to load`] : []),
      ...(loading > 0 ? [`${plural(loading, 'web font')} still loading`] : []),
    ];
    warnings.push({
      code: 'fonts_not_loaded',
      message: `${parts.join(', ')}: text may show in a fallback font`,
    });
  }
  if (captured.truncated) {
    warnings.push({
      code: 'truncated',
      message: `the image was cut at the size limit (${captured.width}x${captured.height})`,
    });
  }
  if (o.blockCookieBanners && state.banner >= BANNER_MIN_SHARE) {
    warnings.push({
      code: 'banner_remaining',
      message: `a consent layer still covers about ${Math.round(state.banner * 100)}% of the viewport`,
    });
  }
  return warnings;
}

/**
 * `blank_image` when the image is one colour, or nearly. Only an image that compresses to
 * almost nothing is looked at: a PNG of at most MAX_READ_PIXELS itself, anything else on a PNG
 * of the same frame taken again, scaled down to SAMPLE_WIDTH wide and SAMPLE_PIXELS.
 */
async function blankImage(
  run: CaptureRun,
  o: RenderOptions,
  captured: CapturedImage,
  frame: ImageFrame | null,
): Promise<CaptureWarning | null> {
  const kind = captured.format === 'pdf' ? 'png' : captured.format;
  const pixels = captured.width * captured.height;
  if (!mayBeBlank(kind, captured.image.length, pixels)) return null;
  let png = captured.image;
  if (kind !== 'png' || pixels > MAX_READ_PIXELS) {
    const scale = Math.min(SAMPLE_WIDTH / captured.width, Math.sqrt(SAMPLE_PIXELS / pixels), 1);
    const clip = frame?.clip ?? { x: 0, y: 0, width: o.width, height: o.height, scale: 1 };
    const shot = await run.step(
      run.cdp.send('Page.captureScreenshot', {
        format: 'png',
        fromSurface: true,
        captureBeyondViewport: frame?.beyondViewport ?? false,
        clip: { ...clip, scale: clip.scale * scale },
      }),
    );
    png = Buffer.from(shot.data, 'base64');
  }
  const seen = blankness(png);
  if (seen === null || !seen.blank) return null;
  return {
    code: 'blank_image',
    message:
      seen.other === 0
        ? `the image is one colour (${seen.colour})`
        : `the image is nearly one colour (${seen.colour}; ${(seen.other * 100).toFixed(2)}% of it differs)`,
  };
}
