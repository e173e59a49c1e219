import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import pixelmatch from 'pixelmatch';
import sharp from 'sharp';
import {
  COMPARE_NICENESS,
  comparedSize,
  compareRaw,
  createImageComparer,
  type RawImage,
} from './pixel-compare.ts';

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

/** A decoded image as a PNG. */
const encode = (raw: RawImage) =>
  sharp(raw.data, { raw: { width: raw.width, height: raw.height, channels: 4 } })
    .png()
    .toBuffer();

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

test('images over the pixel bound are compared scaled down, aspect kept', () => {
  assert.deepEqual(comparedSize(1280, 800, 16_000_000), { width: 1280, height: 800 });
  const tall = comparedSize(1280, 50_000, 16_000_000);
  assert.ok(tall.width * tall.height <= 16_000_000);
  assert.ok(tall.width * tall.height > 15_900_000);
  assert.ok(Math.abs(tall.width / tall.height - 1280 / 50_000) < 0.001);
  assert.deepEqual(comparedSize(100_000, 1, 10), { width: 10, height: 1 });
  assert.deepEqual(comparedSize(1, 100_000, 10), { width: 1, height: 10 });
});

test('the comparer scales large images down to its bound, diff included', async () => {
  const before = await encode(image(200, 100, [255, 255, 255]));
  const after = await encode(
    image(200, 100, [255, 255, 255], { x: 0, y: 0, w: 100, h: 100, colour: [0, 0, 0] }),
  );
  const comparer = createImageComparer({ maxPixels: 5_000 });
  try {
    const result = await comparer.compare(before, after, { threshold: 0.1 });
    assert.ok(Math.abs(result.changedFraction - 0.5) < 0.05, String(result.changedFraction));
    assert.ok(result.diff);
    const meta = await sharp(result.diff).metadata();
    assert.deepEqual([meta.width, meta.height], [100, 50]);
  } finally {
    await comparer.close();
  }
});

test('buffers of its own are handed to the worker, not copied', async () => {
  const png = await encode(image(10, 10, [1, 2, 3]));
  // As storage gives them: memory Node owns.
  const [before, after] = [Buffer.from(png), Buffer.from(png)].map((b) => {
    const own = new Uint8Array(new ArrayBuffer(b.length));
    own.set(b);
    return Buffer.from(own.buffer);
  }) as [Buffer, Buffer];
  const comparer = createImageComparer();
  try {
    const result = await comparer.compare(before, after, { threshold: 0.1 });
    assert.equal(result.changedFraction, 0);
    assert.equal(before.byteLength, 0, 'detached: moved to the worker');
  } finally {
    await comparer.close();
  }
});

test('the band of changed rows gives what pixelmatch gives on the whole image', async () => {
  // Two real captures (the docs' monitor example): text, anti-aliasing and a changed part.
  const raw = async (file: string): Promise<RawImage> => {
    const { data, info } = await sharp(
      new URL(`../../../docs/images/${file}`, import.meta.url).pathname,
    )
      .ensureAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    return { width: info.width, height: info.height, data };
  };
  const [before, after] = [await raw('monitor-before.png'), await raw('monitor-after.png')];
  const whole = new Uint8Array(before.data.length);
  const expected = pixelmatch(before.data, after.data, whole, before.width, before.height, {
    threshold: 0.1,
    alpha: 0.2,
    diffColor: [255, 0, 0],
  });
  assert.ok(expected > 0);
  const result = compareRaw(before, after);
  assert.equal(result.changedFraction, expected / (before.width * before.height));
  assert.ok(result.diff);
  assert.ok(Buffer.from(result.diff).equals(Buffer.from(whole)), 'the same diff, pixel for pixel');
  // Below the threshold nothing is drawn; equal images are not compared at all.
  assert.equal(compareRaw(before, after, 0.99).diff, null);
  assert.deepEqual(compareRaw(before, before, 0.001), { changedFraction: 0, diff: null });
});

test('the comparison thread runs at a lower priority than the service', {
  skip: process.platform !== 'linux' ? 'reads /proc' : false,
}, async () => {
  const png = await encode(image(10, 10, [9, 9, 9]));
  const comparer = createImageComparer();
  try {
    await comparer.compare(Buffer.from(png), Buffer.from(png), { threshold: 0.1 });
    const nice = (task: string) => {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
    };
    const values = readdirSync('/proc/self/task').map(nice);
    assert.ok(values.includes(COMPARE_NICENESS), `thread nice values: ${values.join(', ')}`);
  } finally {
    await comparer.close();
  }
});
