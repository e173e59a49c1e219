import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** One-shot (no Hash object): a third of createHash's time for a key-sized input. */
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex');

/** Uniformly random base62 text from the CSPRNG (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 62 * 4: bytes at or above it would bias the first characters.
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Fixed-width base62 of a non-negative integer. */
export function toBase62(value: number, width: number): string {
  let n = value;
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** URL-safe random token with `bytes` bytes of entropy. */
export const randomToken = (bytes: number): string => randomBytes(bytes).toString('base64url');

/** Constant-time equality of two strings of equal length (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** Fixed-width base62 of bytes read as one big-endian number (`width` must hold them all). */
export function bytesToBase62(bytes: Uint8Array, width: number): string {
  let n = BigInt(`0x${Buffer.from(bytes).toString('hex') || '0'}`);
  let out = '';
  for (let i = 0; i < width; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  if (n !== 0n) throw new RangeError(`${bytes.length} bytes do not fit ${width} base62 digits`);
  return out;
}
