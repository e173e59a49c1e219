/**
 * Phones as phones (docs/api.md, "Devices"): with mobile emulation, a page without a
 * `<meta name="viewport">` is laid out 980 CSS px wide and zoomed out to the screen, as a
 * phone browser does, in the viewport image and in the full page alike: the image shows the
 * whole width, never its left part at full size.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** 960 CSS px wide: blue, then a red band at its right edge (900 to 960); `height` tall. */
const wide = (height: number, head = '') =>
  page(
    `<div style="width:960px;height:${height}px;background:linear-gradient(90deg,#00f 0,#00f 900px,#f00 900px)"></div>`,
    head,
  );

const PHONE = { width: 390, height: 844, mobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** Pixels of row `y` whose colour is mostly red, and mostly blue. */
function rowColours(image: Buffer, y: number): { red: number; blue: number; width: number } {
  const png = PNG.sync.read(image);
  let red = 0;
  let blue = 0;
  for (let x = 0; x < png.width; x++) {
    const i = (y * png.width + x) * 4;
    const [r = 0, , b = 0] = png.data.subarray(i, i + 3);
    if (r > 200 && b < 60) red++;
    if (b > 200 && r < 60) blue++;
  }
  return { red, blue, width: png.width };
}

describe('phones zoom out a page without a viewport tag', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      '/short': wide(400),
      '/tall': wide(5000),
      '/tagged': wide(400, '<meta name="viewport" content="width=device-width, initial-scale=1">'),
    });
    t = await startRenderer();
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  for (const fullPage of [false, true]) {
    it(`${fullPage ? 'full page' : 'viewport'}: the whole 980 px layout, its right edge in view`, async () => {
      const result = await t.render({ url: `${site.origin}/short`, ...PHONE, fullPage });
      assert.equal(result.width, 780);
      const row = rowColours(result.image, 50);
      // The red band is 60 of 980 CSS px: about 48 of 780 device px, at the right.
      assert.ok(row.red > 30 && row.red < 70, `red ${row.red}`);
      assert.ok(row.blue > 650, `blue ${row.blue}`);
    });
  }

  it('a tall page keeps the zoom all the way down', async () => {
    const result = await t.render({ url: `${site.origin}/tall`, ...PHONE, fullPage: true });
    const zoom = 390 / 980;
    assert.ok(
      Math.abs(result.height - Math.round(5000 * zoom * 2)) <= 2,
      `height ${result.height}, expected about ${Math.round(5000 * zoom * 2)}`,
    );
    const bottom = rowColours(result.image, result.height - 4);
    assert.ok(bottom.red > 30 && bottom.red < 70, `red at the bottom ${bottom.red}`);
  });

  it('a page with a viewport tag is laid out at the device width, unzoomed', async () => {
    const result = await t.render({ url: `${site.origin}/tagged`, ...PHONE, fullPage: true });
    const row = rowColours(result.image, 50);
    // 390 CSS px of the 960 px box: blue all the way, the red band far off to the right.
    assert.equal(row.red, 0);
    assert.equal(row.blue, result.width);
  });

  it('a desktop viewport is not zoomed: the same page is cut at its width', async () => {
    const result = await t.render({ url: `${site.origin}/short`, width: 390, height: 844 });
    const row = rowColours(result.image, 50);
    assert.equal(row.red, 0);
  });
});
