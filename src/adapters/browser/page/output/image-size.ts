/**
 * Pixel dimensions read from an image's own header (PNG IHDR, JPEG SOFn, WebP VP8/VP8L/VP8X),
 * so that what the renderer reports is what the file holds.
 */
import type { ImageFormat } from '../../../../domain/captures/renderer.ts';

export interface ImageSize {
  format: ImageFormat;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngSize(buf: Buffer): ImageSize | null {
  if (buf.length < 24 || !buf.subarray(0, 8).equals(PNG_SIGNATURE)) return null;
  if (buf.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { format: 'png', width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) share the range. */
const isSof = (marker: number): boolean =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

function jpegSize(buf: Buffer): ImageSize | null {
  if (buf.length < 4 || buf[0] !== 0xff || buf[1] !== 0xd8) return null;
  let i = 2;
  while (i + 4 <= buf.length) {
    if (buf[i] !== 0xff) return null;
    const marker = buf[i + 1] as number;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2; // markers without a length
      continue;
    }
    const length = buf.readUInt16BE(i + 2);
    if (isSof(marker)) {
      if (i + 9 > buf.length) return null;
      return { format: 'jpeg', height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    }
    if (marker === 0xd9 || marker === 0xda) return null; // end of image / start of scan first
    i += 2 + length;
  }
  return null;
}

function webpSize(buf: Buffer): ImageSize | null {
  if (buf.length < 30) return null;
  if (buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WEBP') {
    return null;
  }
  const chunk = buf.toString('latin1', 12, 16);
  if (chunk === 'VP8 ') {
    // Frame tag (3 bytes) then the start code 9d 01 2a, then 14-bit width and height.
    if (buf[23] !== 0x9d || buf[24] !== 0x01 || buf[25] !== 0x2a) return null;
    return {
      format: 'webp',
      width: buf.readUInt16LE(26) & 0x3fff,
      height: buf.readUInt16LE(28) & 0x3fff,
    };
  }
  if (chunk === 'VP8L') {
    if (buf[20] !== 0x2f) return null;
    const bits = buf.readUInt32LE(21);
    return { format: 'webp', width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === 'VP8X') {
    return { format: 'webp', width: buf.readUIntLE(24, 3) + 1, height: buf.readUIntLE(27, 3) + 1 };
  }
  return null;
}

/** The format and size of a PNG, JPEG or WebP image, or null when the header is not one. */
export function imageSize(buf: Buffer): ImageSize | null {
  return pngSize(buf) ?? jpegSize(buf) ?? webpSize(buf);
}

export interface ImageBounds {
  /** Device px. */
  maxWidth: number;
  /** Device px. */
  maxHeight: number;
  /** width x height, device px. */
  maxPixels: number;
}

/**
 * The largest image of at most `width` x `height` device px within the bounds: the width is
 * cut first (to the plan's width), then the height (to the height limit and to what the pixel
 * budget leaves for that width). `truncated` when anything was cut.
 */
export function fitImage(
  width: number,
  height: number,
  bounds: ImageBounds,
): { width: number; height: number; truncated: boolean } {
  const w = Math.max(1, Math.min(width, Math.floor(bounds.maxWidth)));
  const h = Math.max(
    1,
    Math.min(height, Math.floor(bounds.maxHeight), Math.floor(bounds.maxPixels / w)),
  );
  return { width: w, height: h, truncated: w < width || h < height };
}
