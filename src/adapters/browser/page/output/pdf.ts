/**
 * `format: pdf`: the page printed by Chromium (Page.printToPDF) on the chosen paper, and read
 * as a stream in bounded chunks, never as one protocol message of any size.
 */
import type { CDPSession } from 'puppeteer-core';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { PdfPaper, RenderOptions } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import { noop } from '../../../../lib/abort.ts';
import type { CaptureOutput, CaptureRun } from '../capture-run.ts';
import { SCROLL_REVEAL, scrollThrough, waitForPaintReady } from '../in-page/full-page-scripts.ts';
import { documentHeight } from '../in-page/page-scripts.ts';
import { inIsolatedWorld, pageNumber } from '../in-page/page-values.ts';
import { optionSteps, settles } from '../steps/option-steps.ts';
import {
  FULL_PAGE_SCROLL_BUDGET_MS,
  PAINT_READY_BUDGET_MS,
  SCREENSHOT_COMMAND_TIMEOUT_MS,
  SCROLL_STEP_PAUSE_MS,
} from './framing.ts';

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

/**
 * The whole document printed (print media, as Chromium prints) on the paper, its lazy images
 * and fonts loaded first, at most MAX_PDF_PAGES pages; `pdf_single_page` lays the page out at
 * the paper's width and prints one page as tall as the content, cut at the height bound.
 * `width` and `height` are the first page's size in points.
 */
export async function printPdf(
  run: CaptureRun,
  o: RenderOptions,
): Promise<Omit<CaptureOutput, 'targetStatus' | 'metadata' | 'warnings' | 'settleMs' | 'content'>> {
  const cdp = run.cdp;
  // The height bound in CSS px: a PDF has no device pixels. Never past pdfMaxHeight: tall
  // images (MAX_PAGE_HEIGHT up to 65,535) are drawn in slices, a PDF page is not.
  const maxHeight = Math.min(run.settings.render.maxPageHeight, BOUNDS.browser.pdfMaxHeight);
  await loadWholePage(run, o, maxHeight);
  await run.settleChecks();
  run.enter('capture', 'printing the PDF');
  const paper = await choosePaper(run, o, maxHeight);
  const print = (pageRanges: string) =>
    cdp.send(
      'Page.printToPDF',
      {
        paperWidth: paper.width,
        paperHeight: paper.height,
        marginTop: paper.margin,
        marginBottom: paper.margin,
        marginLeft: paper.margin,
        marginRight: paper.margin,
        printBackground: o.pdfPrintBackground,
        preferCSSPageSize: false,
        pageRanges,
        // As a stream read in bounded chunks, never as one message of any size.
        transferMode: 'ReturnAsStream',
      },
      { timeout: SCREENSHOT_COMMAND_TIMEOUT_MS },
    );
  const out = await run.step(print(o.pdfSinglePage ? '1' : `1-${MAX_PDF_PAGES}`));
  const pdf = await readPdf(run, out.stream);
  if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
    throw new AppError('internal_error', 'chromium returned an unreadable pdf');
  }
  let truncated = paper.truncated;
  if (!o.pdfSinglePage && pdfPageCount(pdf) >= MAX_PDF_PAGES) {
    // More pages than printed, unless the page after the last one does not exist.
    truncated = await run.step(
      print(String(MAX_PDF_PAGES + 1)).then(
        (next) => {
          closeStream(cdp, next.stream);
          return true;
        },
        () => false,
      ),
    );
  }
  return {
    image: pdf,
    format: 'pdf',
    width: Math.round(paper.width * POINTS_PER_INCH),
    height: Math.round(paper.height * POINTS_PER_INCH),
    truncated,
  };
}

/** The page scrolled through to `maxHeight` (CSS px), its lazy images and fonts loaded. */
async function loadWholePage(run: CaptureRun, o: RenderOptions, maxHeight: number): Promise<void> {
  const settle = settles(o);
  run.enter('capture', 'scrolling through the page');
  await run.step(
    inIsolatedWorld(run.page, scrollThrough, {
      maxHeight,
      budgetMs: FULL_PAGE_SCROLL_BUDGET_MS,
      pauseMs: SCROLL_STEP_PAUSE_MS,
      reveal: SCROLL_REVEAL,
    }),
  );
  run.enter('capture', 'waiting for fonts and images');
  if (settle) await run.networkQuiet();
  await run.step(
    inIsolatedWorld(run.page, waitForPaintReady, {
      top: 0,
      bottom: maxHeight,
      budgetMs: settle ? PAINT_READY_BUDGET_MS : 0,
    }),
  );
}

/** The paper a PDF is printed on, in inches, and whether the content was cut to fit it. */
interface Paper {
  width: number;
  height: number;
  margin: number;
  truncated: boolean;
}

/**
 * The chosen paper, turned for `pdf_landscape`; for `pdf_single_page`, no margin and one page
 * as tall as the content laid out at the paper's width (at most `maxHeight` CSS px).
 */
async function choosePaper(run: CaptureRun, o: RenderOptions, maxHeight: number): Promise<Paper> {
  const [shortSide, longSide] = PAPER_INCHES[o.pdfPaper];
  const width = o.pdfLandscape ? longSide : shortSide;
  const height = o.pdfLandscape ? shortSide : longSide;
  if (!o.pdfSinglePage) return { width, height, margin: PDF_MARGIN_INCHES, truncated: false };
  // Laid out at the paper's width with print styles, as printing will lay it out.
  await run.step(
    Promise.all([
      run.cdp.send('Emulation.setEmulatedMedia', {
        media: 'print',
        features: optionSteps.flatMap((s) => s.mediaFeatures?.(o) ?? []),
      }),
      run.cdp.send('Emulation.setDeviceMetricsOverride', {
        width: Math.round(width * CSS_PX_PER_INCH),
        height: o.height,
        deviceScaleFactor: 1,
        mobile: false,
      }),
    ]),
  );
  const content = pageNumber(
    await run.step(inIsolatedWorld(run.page, documentHeight)),
    'document height',
  );
  return {
    width,
    height: Math.max(1, Math.min(content, maxHeight)) / CSS_PX_PER_INCH,
    margin: 0,
    truncated: content > maxHeight,
  };
}

/**
 * A printed PDF read from its stream in chunks (IO.read), at most BOUNDS.browser.maxPdfBytes:
 * a larger one is refused before more of it is read (400, nothing charged).
 */
async function readPdf(run: CaptureRun, handle: string | undefined): Promise<Buffer> {
  if (handle === undefined) throw new AppError('internal_error', 'chromium returned no pdf');
  const max = BOUNDS.browser.maxPdfBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (;;) {
      const read = await run.step(
        run.cdp.send('IO.read', { handle, size: BOUNDS.browser.pdfReadChunkBytes }),
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
    closeStream(run.cdp, handle);
  }
}

/** Frees a stream Chromium holds for us (the page's context closing frees it too). */
function closeStream(cdp: CDPSession, handle: string | undefined): void {
  if (handle !== undefined) cdp.send('IO.close', { handle }).catch(noop);
}
