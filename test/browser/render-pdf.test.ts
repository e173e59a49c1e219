/**
 * `format: "pdf"`: Chromium's print of the page, read back from the PDF's own structure (page
 * objects, their MediaBox, the drawing operators of the content streams, inflated here).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inflateSync } from 'node:zlib';
import { pdfPageCount } from '../../src/adapters/browser/page/output/pdf.ts';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** Every page's MediaBox, [width, height] in points. */
function mediaBoxes(pdf: Buffer): number[][] {
  return [...pdf.toString('latin1').matchAll(/\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/g)].map(
    (m) => [Number(m[1]), Number(m[2])],
  );
}

/** The content streams, inflated: what the pages draw (`1 0 0 rg` is a red fill). */
function drawing(pdf: Buffer): string {
  const text = pdf.toString('latin1');
  const out: string[] = [];
  for (const m of text.matchAll(/stream\r?\n/g)) {
    const start = (m.index ?? 0) + m[0].length;
    const end = text.indexOf('endstream', start);
    try {
      out.push(inflateSync(pdf.subarray(start, end)).toString('latin1'));
    } catch {
      // Not a deflated stream (an image, a font): not drawing operators.
    }
  }
  return out.join('\n');
}

describe('pdf', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  before(async () => {
    site = await startSite({
      // 3,000 px of content on a red background: three A4 pages.
      '/long': page(
        '<div style="height:3000px"><h1>A long document</h1></div>',
        '<style>body{background:rgb(255,0,0)}</style>',
      ),
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const pdf = async (options: Partial<RenderOptions>) => {
    const result = await t.render(
      { url: `${site.origin}/long`, format: 'pdf', ...options },
      30_000,
    );
    assert.equal(result.image.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.equal(result.format, 'pdf');
    return result;
  };

  it('prints the whole document on A4 by default, background included', async () => {
    const r = await pdf({});
    const boxes = mediaBoxes(r.image);
    assert.equal(pdfPageCount(r.image), 3);
    assert.equal(boxes.length, 3);
    for (const [w, h] of boxes) {
      assert.ok(
        Math.abs((w as number) - 595) < 1 && Math.abs((h as number) - 842) < 1,
        `${w}x${h}`,
      );
    }
    assert.deepEqual([r.width, r.height], [595, 842]);
    assert.equal(r.truncated, false);
    assert.match(drawing(r.image), /\b1 0 0 rg\b/, 'the red background is drawn');
  });

  it('takes the paper, its orientation and the background setting', async () => {
    const r = await pdf({ pdfPaper: 'letter', pdfLandscape: true, pdfPrintBackground: false });
    const [first] = mediaBoxes(r.image);
    assert.deepEqual(first, [792, 612]);
    assert.deepEqual([r.width, r.height], [792, 612]);
    assert.doesNotMatch(drawing(r.image), /\b1 0 0 rg\b/, 'no background without it');
  });

  it('pdf_single_page: one page as tall as the content', async () => {
    const r = await pdf({ pdfSinglePage: true });
    assert.equal(pdfPageCount(r.image), 1);
    const [[w, h] = []] = mediaBoxes(r.image);
    assert.ok(Math.abs((w as number) - 595) < 1, `width ${w}`);
    // 3,000 px of content (plus the body's margins) at 72/96 points per px.
    assert.ok((h as number) >= 2250 && (h as number) < 2300, `height ${h}`);
    assert.equal(r.height, Math.round(h as number));
  });

  it('leaves the page as it was for the next image capture', async () => {
    await pdf({ pdfSinglePage: true });
    const image = await t.render({ url: `${site.origin}/long`, width: 400, height: 300 });
    assert.deepEqual([image.format, image.width, image.height], ['png', 400, 300]);
  });
});
