import { randomBase62, sha256Hex, toBase62 } from '../lib/crypto.ts';

/**
 * API key text: `sk_live_` + 32 random base62 characters (about 190 bits) + a 6-character
 * base62 checksum of those 32. The checksum lets a malformed or mistyped key be refused
 * without a database read; it is not a secret and adds no security.
 */
export const KEY_PREFIX = 'sk_live_';
const RANDOM_LENGTH = 32;
const CHECK_LENGTH = 6;
const KEY_PATTERN = /^sk_live_[0-9A-Za-z]{38}$/;
/** What the dashboard shows of a key (docs/api.md, "API keys"). */
export const DISPLAY_PREFIX_LENGTH = 12;

function checksum(body: string): string {
  // First 32 bits of SHA-256, base62-encoded; 6 characters hold 62^6 > 2^35 values.
  const n = Number.parseInt(sha256Hex(body).slice(0, 8), 16);
  return toBase62(n, CHECK_LENGTH);
}

export function generateApiKey(): { key: string; prefix: string; hash: string } {
  const body = randomBase62(RANDOM_LENGTH);
  const key = `${KEY_PREFIX}${body}${checksum(body)}`;
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: sha256Hex(key) };
}

export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + RANDOM_LENGTH);
  return key.slice(KEY_PREFIX.length + RANDOM_LENGTH) === checksum(body);
}

export const hashApiKey = (key: string): string => sha256Hex(key);
