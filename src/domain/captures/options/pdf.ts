/**
 * The `pdf_*` options of `format: "pdf"`. Each is refused without that format; the last one
 * in the table also refuses the image-only fields a request gives with it (a PDF is always
 * the whole document, at the paper's size, so there is nothing to frame, scale or encode).
 */
import { Type } from 'typebox';
import { AppError } from '../../errors.ts';
import { PDF_PAPERS, type PdfPaper } from '../renderer.ts';
import { defineOption, type OptionContext } from './define.ts';

/** Image-only fields: given with format pdf, they are a 400 (they would do nothing). */
const IMAGE_ONLY = [
  'full_page',
  'selector',
  'clip',
  'quality',
  'omit_background',
  'scroll_into_view',
];

function pdfOnly(name: string, value: unknown, { resolved }: OptionContext): void {
  if (value !== undefined && resolved.format !== 'pdf') {
    throw new AppError('invalid_request', `${name} applies to format pdf only`);
  }
}

export const pdfPaper = defineOption({
  name: 'pdf_paper',
  schema: Type.Unsafe<PdfPaper>(
    Type.String({
      enum: [...PDF_PAPERS],
      description: 'format pdf: the paper size. Default a4.',
    }),
  ),
  resolve(value, context) {
    pdfOnly('pdf_paper', value, context);
    return { pdfPaper: value ?? 'a4' };
  },
  cacheKey: (o) => (o.format === 'pdf' ? o.pdfPaper : undefined),
});

export const pdfLandscape = defineOption({
  name: 'pdf_landscape',
  schema: Type.Boolean({ description: 'format pdf: the paper turned on its side. Default false.' }),
  resolve(value, context) {
    pdfOnly('pdf_landscape', value, context);
    return { pdfLandscape: value ?? false };
  },
  cacheKey: (o) => (o.format === 'pdf' && o.pdfLandscape ? true : undefined),
});

export const pdfPrintBackground = defineOption({
  name: 'pdf_print_background',
  schema: Type.Boolean({
    description: 'format pdf: background colours and images printed. Default true.',
  }),
  resolve(value, context) {
    pdfOnly('pdf_print_background', value, context);
    return { pdfPrintBackground: value ?? true };
  },
  cacheKey: (o) => (o.format === 'pdf' && !o.pdfPrintBackground ? false : undefined),
});

export const pdfSinglePage = defineOption({
  name: 'pdf_single_page',
  schema: Type.Boolean({
    description:
      "format pdf: one page as tall as the content (the paper's width), cut at the height " +
      'bound. Default false.',
  }),
  resolve(value, context) {
    pdfOnly('pdf_single_page', value, context);
    if (context.resolved.format === 'pdf') {
      const given = IMAGE_ONLY.filter((field) => context.input[field] !== undefined);
      if (given.length > 0) {
        throw new AppError(
          'invalid_request',
          `${given.join(', ')} ${given.length === 1 ? 'does' : 'do'} not apply to format pdf`,
        );
      }
    }
    return { pdfSinglePage: value ?? false };
  },
  cacheKey: (o) => (o.format === 'pdf' && o.pdfSinglePage ? true : undefined),
});
