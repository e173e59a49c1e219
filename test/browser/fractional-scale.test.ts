/**
 * device_scale_factor may be any number from 1 to 3. At a fractional scale the CSS clip handed
 * to Chromium is a device-pixel size divided by the scale; the image Chromium returns must
 * still be within the bounds (plan width x scale, height limit, pixel budget), never one
 * pixel over (which the post-check would turn into a 500).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

const MAX_HEIGHT = 1_000;
const MAX_PIXELS = 300_000;

describe('fractional device scale factors at the image bounds', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      // Fractional offsets and sizes: the element's box does not fall on the pixel grid.
      '/element': page(
        '<body style="margin:0"><div style="height:13.3px"></div>' +
          '<div id="big" style="margin-left:7.7px;width:2345.6px;height:3456.7px;' +
          'background:linear-gradient(red,blue)"></div></body>',
      ),
      '/tall': page(
        '<body style="margin:0"><div style="height:7777.7px;background:linear-gradient(red,blue)"></div></body>',
      ),
    });
    t = await startRenderer({ maxPageHeight: MAX_HEIGHT, maxImagePixels: MAX_PIXELS });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  for (const dsf of [1.37, 2.5, 1.1, 2.9]) {
    for (const maxWidth of [300, 333, 417]) {
      // A viewport of the plan's width is this many device px (Chromium rounds).
      const bound = Math.round(maxWidth * dsf);
      it(`element at scale ${dsf}, plan width ${maxWidth}: cut to the bounds, not over`, async () => {
        const out = await t.render(
          {
            url: `${site.origin}/element`,
            selector: '#big',
            deviceScaleFactor: dsf,
            maxWidth,
            width: Math.min(maxWidth, 400),
            height: 300,
          },
          60_000,
        );
        assert.equal(out.truncated, true);
        assert.ok(out.width <= bound, `${out.width} > ${bound}`);
        assert.ok(out.height <= MAX_HEIGHT);
        assert.ok(out.width * out.height <= MAX_PIXELS);
        assert.ok(out.width >= bound - 1, `${out.width}: cut too far`);
      });

      it(`full page at scale ${dsf}, plan width ${maxWidth}: cut to the bounds, not over`, async () => {
        const width = maxWidth;
        const out = await t.render(
          {
            url: `${site.origin}/tall`,
            fullPage: true,
            deviceScaleFactor: dsf,
            maxWidth,
            width,
            height: 300,
          },
          60_000,
        );
        assert.equal(out.truncated, true);
        assert.ok(out.width <= bound, `${out.width} > ${bound}`);
        assert.ok(out.height <= MAX_HEIGHT);
        assert.ok(out.width * out.height <= MAX_PIXELS);
      });

      it(`viewport of the plan's width at scale ${dsf}, plan width ${maxWidth}: not cut`, async () => {
        const out = await t.render(
          {
            url: `${site.origin}/tall`,
            deviceScaleFactor: dsf,
            maxWidth,
            width: maxWidth,
            height: 50, // within the pixel budget at every scale here
          },
          60_000,
        );
        assert.equal(out.width, bound);
        assert.equal(out.truncated, false);
      });
    }
  }
});
