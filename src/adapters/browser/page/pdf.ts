/**
 * `format: pdf`: the page printed by Chromium (Page.printToPDF) on the chosen paper, and read
 * as a stream in bounded chunks, never as one protocol message of any size.
 */
import type { CDPSession } from 'puppeteer-core';
import { BOUNDS } from '../../../domain/bounds.ts';
import type { PdfPaper, RenderOptions } from '../../../domain/captures/renderer.ts';
import { AppError } from '../../../domain/errors.ts';
import { noop } from '../process/abort.ts';
import type { CaptureOutput, CaptureRun } from './capture-run.ts';
import {
  FULL_PAGE_SCROLL_BUDGET_MS,
  PAINT_READY_BUDGET_MS,
  SCREENSHOT_COMMAND_TIMEOUT_MS,
  SCROLL_STEP_PAUSE_MS,
} from './framing.ts';
import { SCROLL_REVEAL, scrollThrough, waitForPaintReady } from './full-page-scripts.ts';
import { optionSteps, settles } from './option-steps.ts';
import { documentHeight } from './page-scripts.ts';
import { inIsolatedWorld, pageNumber } from './page-values.ts';

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
  const settle = settles(o);
  // The height bound in CSS px: a PDF has no device pixels. Never past pdfMaxHeight: tall
  // images (MAX_PAGE_HEIGHT up to 65,535) are drawn in slices, a PDF page is not.
  const maxHeight = Math.min(run.settings.maxPageHeight, BOUNDS.browser.pdfMaxHeight);
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
  await run.settleChecks();
  run.enter('capture', 'printing the PDF');
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
        cdp.send('Emulation.setEmulatedMedia', {
          media: 'print',
          features: optionSteps.flatMap((s) => s.mediaFeatures?.(o) ?? []),
        }),
        cdp.send('Emulation.setDeviceMetricsOverride', {
          width: Math.round(paperWidth * CSS_PX_PER_INCH),
          height: o.height,
          deviceScaleFactor: 1,
          mobile: false,
        }),
      ]),
    );
    const height = pageNumber(
      await run.step(inIsolatedWorld(run.page, documentHeight)),
      'document height',
    );
    truncated = height > maxHeight;
    paperHeight = Math.max(1, Math.min(height, maxHeight)) / CSS_PX_PER_INCH;
  }
  const print = (pageRanges: string) =>
    cdp.send(
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
  const pdf = await readPdf(run, out.stream);
  if (!pdf.subarray(0, 5).equals(Buffer.from('%PDF-'))) {
    throw new AppError('internal_error', 'chromium returned an unreadable pdf');
  }
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
    width: Math.round(paperWidth * POINTS_PER_INCH),
    height: Math.round(paperHeight * POINTS_PER_INCH),
    truncated,
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
