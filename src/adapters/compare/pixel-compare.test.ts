import assert from 'node:assert/strict';
import { test } from 'node:test';
import sharp from 'sharp';
import { compareRaw, createImageComparer, type RawImage } from './pixel-compare.ts';

/** A w x h image of one colour, with an optional rectangle of another. */
function image(
  width: number,
  height: number,
  colour: [number, number, number],
  patch?: { x: number; y: number; w: number; h: number; colour: [number, number, number] },
): RawImage {
  const data = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inPatch =
        patch && x >= patch.x && x < patch.x + patch.w && y >= patch.y && y < patch.y + patch.h;
      const [r, g, b] = inPatch ? patch.colour : colour;
      data.set([r, g, b, 255], (y * width + x) * 4);
    }
  }
  return { width, height, data };
}

test('the same pixels: nothing changed', () => {
  const result = compareRaw(image(20, 10, [255, 255, 255]), image(20, 10, [255, 255, 255]));
  assert.equal(result.changedFraction, 0);
  assert.ok(result.diff);
});

test('a changed area: its share of the pixels, marked red in the diff', () => {
  const before = image(20, 10, [255, 255, 255], { x: 0, y: 0, w: 10, h: 5, colour: [0, 0, 255] });
  const after = image(20, 10, [255, 255, 255], { x: 0, y: 0, w: 10, h: 5, colour: [0, 160, 0] });
  const { changedFraction, diff } = compareRaw(before, after);
  assert.equal(changedFraction, 50 / 200);
  assert.ok(diff);
  assert.deepEqual([...diff.subarray(0, 4)], [255, 0, 0, 255], 'a changed pixel is red');
  const far = (9 * 20 + 19) * 4;
  assert.equal(diff[far], diff[far + 1], 'an unchanged pixel is grey');
});

test('a colour shift below the tolerance is not a change', () => {
  const result = compareRaw(image(8, 8, [200, 200, 200]), image(8, 8, [201, 200, 199]));
  assert.equal(result.changedFraction, 0);
});

test('another size: changed whole, no diff', () => {
  const result = compareRaw(image(20, 10, [0, 0, 0]), image(20, 11, [0, 0, 0]));
  assert.deepEqual(result, { changedFraction: 1, diff: null });
});

test('the comparer decodes PNGs and encodes the diff as a PNG', async () => {
  const encode = (raw: RawImage) =>
    sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } })
      .png()
      .toBuffer();
  const before = await encode(image(10, 10, [255, 255, 255]));
  const after = await encode(
    image(10, 10, [255, 255, 255], { x: 0, y: 0, w: 5, h: 2, colour: [0, 0, 0] }),
  );
  const result = await createImageComparer().compare(before, after, { threshold: 0.1 });
  assert.equal(result.changedFraction, 0.1);
  assert.ok(result.diff);
  const meta = await sharp(result.diff).metadata();
  assert.equal(meta.format, 'png');
  assert.equal(meta.width, 10);
  const below = await createImageComparer().compare(before, after, { threshold: 0.2 });
  assert.deepEqual(below, { changedFraction: 0.1, diff: null }, 'no diff for a run not changed');
});
