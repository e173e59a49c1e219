import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encode as encodeJpeg } from 'jpeg-js';
import { PNG } from 'pngjs';
import { fitImage, imageSize } from './image-size.ts';

function riff(chunk: string, payload: number[]): Buffer {
  const buf = Buffer.alloc(30 + 16);
  buf.write('RIFF', 0, 'latin1');
  buf.writeUInt32LE(buf.length - 8, 4);
  buf.write('WEBP', 8, 'latin1');
  buf.write(chunk, 12, 'latin1');
  buf.writeUInt32LE(buf.length - 20, 16);
  Buffer.from(payload).copy(buf, 20);
  return buf;
}

describe('imageSize', () => {
  it('reads PNG IHDR', () => {
    const png = PNG.sync.write(new PNG({ width: 7, height: 5 }));
    assert.deepEqual(imageSize(png), { format: 'png', width: 7, height: 5 });
  });

  it('reads JPEG SOF after the APP segments', () => {
    const { data } = encodeJpeg({ width: 9, height: 4, data: Buffer.alloc(9 * 4 * 4, 200) }, 80);
    assert.deepEqual(imageSize(data), { format: 'jpeg', width: 9, height: 4 });
  });

  it('reads WebP VP8 (lossy), VP8L (lossless) and VP8X (extended)', () => {
    // VP8: 3-byte frame tag, start code 9d 01 2a, 14-bit width and height (scale bits set).
    const lossy = riff('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, 0x00, 0xc5, 0x20, 0x43]);
    assert.deepEqual(imageSize(lossy), { format: 'webp', width: 0x0500, height: 0x0320 });
    // VP8L: signature 0x2f, then (width-1) in 14 bits and (height-1) in the next 14.
    const bits = (300 - 1) | ((200 - 1) << 14);
    const lossless = riff('VP8L', [
      0x2f,
      bits & 0xff,
      (bits >> 8) & 0xff,
      (bits >> 16) & 0xff,
      (bits >>> 24) & 0xff,
    ]);
    assert.deepEqual(imageSize(lossless), { format: 'webp', width: 300, height: 200 });
    // VP8X: flags, 3 reserved bytes, then 24-bit (width-1) and (height-1).
    const w = 3840 - 1;
    const h = 16384 - 1;
    const extended = riff('VP8X', [
      0x10,
      0,
      0,
      0,
      w & 0xff,
      (w >> 8) & 0xff,
      w >> 16,
      h & 0xff,
      (h >> 8) & 0xff,
      h >> 16,
    ]);
    assert.deepEqual(imageSize(extended), { format: 'webp', width: 3840, height: 16384 });
  });

  it('returns null for anything else', () => {
    assert.equal(imageSize(Buffer.from('GIF89a......................')), null);
    assert.equal(imageSize(Buffer.alloc(0)), null);
    assert.equal(imageSize(Buffer.from([0xff, 0xd8, 0xff, 0xd9])), null);
    assert.equal(imageSize(riff('VP8 ', [0, 0, 0, 1, 2, 3])), null);
  });
});

describe('fitImage', () => {
  const bounds = { maxWidth: 11_520, maxHeight: 16_384, maxPixels: 64_000_000 };

  it('leaves an image within every bound alone', () => {
    assert.deepEqual(fitImage(1920, 1080, bounds), { width: 1920, height: 1080, truncated: false });
    assert.deepEqual(fitImage(3900, 16_384, bounds), {
      width: 3900,
      height: 16_384,
      truncated: false,
    });
  });

  it('cuts the width to the plan width, then the height to the limit', () => {
    assert.deepEqual(fitImage(5000, 300, { ...bounds, maxWidth: 1920 }), {
      width: 1920,
      height: 300,
      truncated: true,
    });
    assert.deepEqual(fitImage(1920, 40_000, bounds), {
      width: 1920,
      height: 16_384,
      truncated: true,
    });
  });

  it('cuts the height to what the pixel budget leaves for the width', () => {
    const fit = fitImage(11_520, 120_000, bounds);
    assert.deepEqual(fit, { width: 11_520, height: 5555, truncated: true });
    assert.ok(fit.width * fit.height <= bounds.maxPixels);
    // A viewport capture can pass the budget too (Pro: 3840 x 2160 at scale 3).
    assert.deepEqual(fitImage(11_520, 6480, bounds), {
      width: 11_520,
      height: 5555,
      truncated: true,
    });
  });
});
