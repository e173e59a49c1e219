import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hash,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

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

/** HMAC-SHA256 of a text, in hex. */
export const hmacSha256Hex = (key: Uint8Array, value: string): string =>
  createHmac('sha256', key).update(value).digest('hex');

const SEALED_PREFIX = 'v1.';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts a text with AES-256-GCM under a 32-byte key: `v1.` + base64url of IV, ciphertext
 * and tag. `context` is authenticated but not stored: the same context must open it, so a
 * sealed value copied to another row (another context) does not open there.
 */
export function seal(key: Uint8Array, plaintext: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return SEALED_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The text `seal` encrypted, or null when it does not open (another key or context, altered). */
export function unseal(key: Uint8Array, sealed: string, context: string): string | null {
  if (!sealed.startsWith(SEALED_PREFIX)) return null;
  const bytes = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    const body = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
