import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

/**
 * scrypt at one of OWASP's equivalent parameter sets (N=2^15, r=8, p=3: 32 MiB, about
 * 100 ms here). The parameters travel inside the stored hash so they can be raised later
 * without invalidating existing passwords.
 */
let LOG_N = 15;
const R = 8;
const P = 3;
const KEY_LENGTH = 32;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number) {
  return new Promise<Buffer>((resolve, reject) => {
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_LENGTH,
      // scrypt needs 128 * N * r bytes; leave room above it rather than a fixed cap.
      { N: 2 ** logN, r, p, maxmem: 2 * 128 * 2 ** logN * r + 1024 * 1024 },
      (err, key) => (err ? reject(err) : resolve(key)),
    );
  });
}

/**
 * Lowers or raises the work factor for new hashes (PASSWORD_HASH_COST, log2 of N). Below 15
 * is for tests and development machines only; existing hashes keep their own parameters.
 */
export function setPasswordCost(logN: number): void {
  LOG_N = logN;
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, LOG_N, R, P);
  return `scrypt$${LOG_N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, logN, r, p, salt, key] = parts as [string, string, string, string, string, string];
  const expected = Buffer.from(key, 'base64');
  const actual = await derive(
    password,
    Buffer.from(salt, 'base64'),
    Number(logN),
    Number(r),
    Number(p),
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash of a random password, verified against when the email is unknown so that
 * "no such user" costs the same time as "wrong password".
 */
let decoy: Promise<string> | undefined;
export const decoyHash = (): Promise<string> => {
  decoy ??= hashPassword(randomBytes(16).toString('hex')).catch((err: unknown) => {
    decoy = undefined;
    throw err;
  });
  return decoy;
};
