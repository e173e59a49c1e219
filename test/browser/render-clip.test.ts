/**
 * `clip`: a region of the page, in CSS px of the document, is the image: its exact size at
 * scale 1 and 2, the region's own pixels (below the fold included), cut to the image bounds
 * when larger.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, imageSize, page, startSite } from '../helpers/fixtures.ts';
import { assertColor, decodeImage, startRenderer, type TestRenderer } from './helpers.ts';

const PURPLE = [128, 0, 128];
const WHITE = [255, 255, 255];

describe('clip', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      // A purple 100x80 box at (50, 1200), far below a 400x300 viewport; white elsewhere.
      '/box': page(
        `<div style="height:3000px;position:relative">
           <div style="position:absolute;left:50px;top:1200px;width:100px;height:80px;background:rgb(128,0,128)"></div>
         </div>`,
        '<style>html,body{margin:0;background:rgb(255,255,255)}</style>',
      ),
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('captures exactly the region, below the fold too', async () => {
    const result = await t.render({
      url: `${site.origin}/box`,
      clip: { x: 50, y: 1200, width: 100, height: 80 },
    });
    assert.deepEqual(imageSize(result.image), { format: 'png', width: 100, height: 80 });
    assert.equal(result.truncated, false);
    const image = decodeImage(result.image);
    for (const [x, y] of [
      [0, 0],
      [99, 0],
      [0, 79],
      [99, 79],
      [50, 40],
    ] as const) {
      assertColor(image, x, y, PURPLE, `inside (${x},${y})`);
    }
  });

  it('takes the region with its surroundings, at the device scale', async () => {
    const result = await t.render({
      url: `${site.origin}/box`,
      clip: { x: 40, y: 1190, width: 120, height: 100 },
      deviceScaleFactor: 2,
    });
    assert.deepEqual(imageSize(result.image), { format: 'png', width: 240, height: 200 });
    const image = decodeImage(result.image);
    assertColor(image, 5, 5, WHITE, 'the margin around the box');
    assertColor(image, 120, 100, PURPLE, 'the box');
  });

  it('cuts a region wider than the plan to the bounds, marked truncated', async () => {
    const result = await t.render({
      url: `${site.origin}/box`,
      clip: { x: 0, y: 0, width: 5_000, height: 100 },
      maxWidth: 1_920,
    });
    assert.deepEqual(imageSize(result.image), { format: 'png', width: 1_920, height: 100 });
    assert.equal(result.truncated, true);
  });
});
