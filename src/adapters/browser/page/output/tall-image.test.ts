import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { BOUNDS } from '../../../../domain/bounds.ts';
import { imageSize } from './image-size.ts';
import { joinSlices, needsSlices, sliceRows } from './tall-image.ts';

describe('sliceRows', () => {
  it('slices only what does not fit in one piece', () => {
    assert.equal(needsSlices(16_384), false);
    assert.equal(needsSlices(16_385), true);
    assert.deepEqual(sliceRows(BOUNDS.browser.sliceHeight), [[0, BOUNDS.browser.sliceHeight]]);
  });

  it('cuts the fewest slices of even heights, covering every row once', () => {
    for (const height of [16_385, 30_000, 50_000, 65_535, 49_153]) {
      const rows = sliceRows(height);
      assert.equal(rows.length, Math.ceil(height / BOUNDS.browser.sliceHeight), `${height}`);
      let next = 0;
      for (const [top, bottom] of rows) {
        assert.equal(top, next, `${height}: no gap, no overlap`);
        assert.ok(bottom - top <= BOUNDS.browser.sliceHeight, `${height}: ${bottom - top} rows`);
        next = bottom;
      }
      assert.equal(next, height);
      const heights = rows.map(([top, bottom]) => bottom - top);
      assert.ok(Math.max(...heights) - Math.min(...heights) < rows.length, `${heights}`);
    }
    assert.deepEqual(sliceRows(20_000), [
      [0, 4_000],
      [4_000, 8_000],
      [8_000, 12_000],
      [12_000, 16_000],
      [16_000, 20_000],
    ]);
  });
});

/** A PNG slice of one colour. */
const slice = (width: number, height: number, r: number) =>
  sharp({ create: { width, height, channels: 4, background: { r, g: 0, b: 0, alpha: 1 } } })
    .png()
    .toBuffer();

describe('joinSlices', () => {
  it('joins top to bottom without the padding under a shorter last slice', async () => {
    const slices = [await slice(40, 100, 10), await slice(40, 100, 20), await slice(40, 97, 30)];
    const out = await joinSlices(slices, 'png', 80, { width: 40, height: 297, maxPixels: 1e6 });
    assert.deepEqual(imageSize(out), { format: 'png', width: 40, height: 297 });
    const { data, info } = await sharp(out).raw().toBuffer({ resolveWithObject: true });
    const red = (y: number) => data[y * info.width * info.channels] ?? -1;
    assert.deepEqual(
      [red(0), red(99), red(100), red(199), red(200), red(296)],
      [10, 10, 20, 20, 30, 30],
    );
  });

  it('brings the join to the asked size, in the asked format', async () => {
    const slices = [await slice(40, 100, 10), await slice(41, 100, 20)];
    for (const format of ['jpeg', 'png'] as const) {
      const out = await joinSlices(slices, format, 80, { width: 20, height: 100, maxPixels: 1e6 });
      assert.deepEqual(imageSize(out), { format, width: 20, height: 100 });
    }
  });

  it('refuses slices over the pixel budget', async () => {
    const slices = [await slice(100, 100, 10), await slice(100, 100, 20)];
    await assert.rejects(
      joinSlices(slices, 'png', 80, { width: 100, height: 200, maxPixels: 5_000 }),
      /could not be joined/,
    );
  });
});
