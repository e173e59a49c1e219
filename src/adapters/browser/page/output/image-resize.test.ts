import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { planResize, resizedClip, resizeExactly } from './image-resize.ts';

const BOUNDS = { maxWidth: 3840, maxHeight: 16_384, maxPixels: 64_000_000 };
const plan = (
  source: { width: number; height: number },
  o: { w?: number; h?: number; fit?: 'cover' | 'contain' | 'fill' },
  bounds = BOUNDS,
) =>
  planResize(
    source,
    { imageWidth: o.w ?? null, imageHeight: o.h ?? null, imageFit: o.fit ?? 'cover' },
    bounds,
  );

describe('image resize plans', () => {
  it('no side asked: no plan', () => {
    assert.equal(plan({ width: 800, height: 400 }, {}), null);
  });

  it('one side: the other follows, the whole source drawn', () => {
    const w = plan({ width: 800, height: 400 }, { w: 200 });
    assert.deepEqual([w?.width, w?.height, w?.scale, w?.stretch], [200, 100, 0.25, false]);
    assert.deepEqual(w?.crop, { x: 0, y: 0, width: 800, height: 400 });
    const h = plan({ width: 800, height: 3000 }, { h: 300 });
    assert.deepEqual([h?.width, h?.height], [80, 300]);
  });

  it('cover: the box, cut from the top centre', () => {
    const p = plan({ width: 800, height: 400 }, { w: 100, h: 100 });
    assert.deepEqual([p?.width, p?.height, p?.scale], [100, 100, 0.25]);
    assert.deepEqual(p?.crop, { x: 200, y: 0, width: 400, height: 400 });
    // A tall source keeps its top.
    const tall = plan({ width: 800, height: 3000 }, { w: 400, h: 100 });
    assert.deepEqual(tall?.crop, { x: 0, y: 0, width: 800, height: 200 });
  });

  it('contain: inside both, no padding', () => {
    const p = plan({ width: 800, height: 400 }, { w: 100, h: 100, fit: 'contain' });
    assert.deepEqual([p?.width, p?.height, p?.scale], [100, 50, 0.125]);
  });

  it('fill: drawn at the larger scale, stretched to the box', () => {
    const p = plan({ width: 800, height: 400 }, { w: 100, h: 100, fit: 'fill' });
    assert.deepEqual([p?.width, p?.height, p?.scale, p?.stretch], [100, 100, 0.25, true]);
  });

  it('one side whose other side passes the bounds: cut there, truncated', () => {
    const p = plan({ width: 800, height: 16_000 }, { w: 1600 }, { ...BOUNDS, maxHeight: 20_000 });
    assert.deepEqual([p?.width, p?.height, p?.truncated], [1600, 20_000, true]);
    assert.equal(p?.crop.height, 10_000);
  });

  it('the clip that draws a plan: cut and scaled in CSS px', () => {
    const p = plan({ width: 1600, height: 800 }, { w: 100, h: 100 });
    // A 800 x 400 CSS px region at device scale 2.
    const clip = resizedClip(
      { x: 10, y: 20, width: 800, height: 400, scale: 1 },
      p as NonNullable<typeof p>,
      2,
    );
    assert.deepEqual(clip, { x: 210, y: 20, width: 400, height: 400, scale: 0.125 });
  });
});

describe('exact resize', () => {
  it('stretches a PNG to the size asked, in the same format', async () => {
    const png = new PNG({ width: 40, height: 20 });
    png.data.fill(255);
    const out = await resizeExactly(PNG.sync.write(png), 'png', 80, {
      width: 17,
      height: 33,
      maxPixels: 1_000_000,
    });
    const read = PNG.sync.read(out);
    assert.deepEqual([read.width, read.height], [17, 33]);
  });

  it('refuses an image of more pixels than it may decode', async () => {
    const png = new PNG({ width: 100, height: 100 });
    await assert.rejects(
      resizeExactly(PNG.sync.write(png), 'png', 80, { width: 10, height: 10, maxPixels: 5_000 }),
      /could not be resized/,
    );
  });
});
