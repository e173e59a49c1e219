import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { blankness, mayBeBlank } from './blank-image.ts';

function png(
  width: number,
  height: number,
  paint: (x: number, y: number) => number[],
  options: { filterType?: number; colorType?: 2 | 6 } = {},
): Buffer {
  const image = new PNG({
    width,
    height,
    ...(options.colorType === 2 ? { colorType: 2, inputHasAlpha: true } : {}),
    ...(options.filterType !== undefined ? { filterType: options.filterType } : {}),
  });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const [r = 0, g = 0, b = 0, a = 255] = paint(x, y);
      image.data.set([r, g, b, a], (y * width + x) * 4);
    }
  }
  return PNG.sync.write(image);
}

describe('blank images', () => {
  it('one colour is blank, and named', () => {
    const result = blankness(png(200, 100, () => [255, 255, 255]));
    assert.deepEqual(result, { blank: true, colour: '#ffffff', other: 0 });
  });

  it('a few stray pixels or a faint gradient are still blank', () => {
    const stray = blankness(
      png(200, 100, (x, y) => (x === 5 && y < 10 ? [0, 0, 0] : [30, 30, 30])),
    );
    assert.equal(stray?.blank, true);
    const faint = blankness(png(200, 100, (x) => [240 + Math.floor(x / 20), 240, 240]));
    assert.equal(faint?.blank, true);
  });

  it('a line of text is not blank', () => {
    // 60 x 8 dark pixels on 200 x 100: 2.4 % of the image.
    const text = png(200, 100, (x, y) =>
      x > 20 && x < 80 && y > 40 && y < 48 ? [20, 20, 20] : [255, 255, 255],
    );
    assert.equal(blankness(text)?.blank, false);
  });

  it('a fully transparent image is blank; transparent with a shape is not', () => {
    assert.equal(blankness(png(50, 50, () => [0, 0, 0, 0]))?.colour, '#00000000');
    const shape = png(50, 50, (x, y) => (x < 20 && y < 20 ? [255, 0, 0, 255] : [0, 0, 0, 0]));
    assert.equal(blankness(shape)?.blank, false);
  });

  it('reads every PNG filter and RGB as well as RGBA alike', () => {
    const text = (x: number, y: number) =>
      x > 20 && x < 80 && y > 40 && y < 48 ? [20, 20, 20] : [250, 250, 250];
    const blank = (x: number) => [200 + (x % 3), 200, 200];
    for (const filterType of [0, 1, 2, 3, 4]) {
      for (const colorType of [2, 6] as const) {
        const what = `filter ${filterType}, colour type ${colorType}`;
        assert.equal(blankness(png(200, 100, text, { filterType, colorType }))?.blank, false, what);
        assert.deepEqual(
          blankness(png(200, 100, blank, { filterType, colorType })),
          { blank: true, colour: '#c8c8c8', other: 0 },
          what,
        );
      }
    }
  });

  it('an image whose first pixel is not its main colour is still judged right', () => {
    const dot = png(200, 100, (x, y) => (x < 2 && y < 2 ? [0, 0, 0] : [255, 255, 255]));
    assert.deepEqual(blankness(dot), { blank: true, colour: '#ffffff', other: 4 / 20_000 });
    const half = png(200, 100, (x) => (x < 100 ? [0, 0, 0] : [255, 255, 255]));
    assert.equal(blankness(half)?.blank, false);
  });

  it('an unreadable image is not judged', () => {
    assert.equal(blankness(Buffer.from('not a png')), null);
  });

  it('only small encodings are suspects', () => {
    assert.equal(mayBeBlank('png', 3_000, 1280 * 720), true);
    assert.equal(mayBeBlank('png', 120_000, 1280 * 720), false);
    assert.equal(mayBeBlank('jpeg', 30_000, 1280 * 720), true);
    assert.equal(mayBeBlank('jpeg', 0, 0), false);
  });
});
