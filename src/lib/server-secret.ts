import { createHmac } from 'node:crypto';

/**
 * Secrets the service must be able to show or check again (a key's signing secret, an
 * account's webhook secret) are not stored: each is derived from the one server secret and
 * what names it (purpose, owner id, a stored random nonce), with HMAC-SHA256 as the PRF. A
 * copy of the database alone recreates none of them; a new nonce replaces one.
 */
export interface SecretDeriver {
  /** 32 bytes for this purpose and these parts; the same inputs give the same bytes. */
  derive(purpose: string, ...parts: Array<string | number>): Buffer;
}

export function createSecretDeriver(serverSecret: string): SecretDeriver {
  if (serverSecret.length < 32) throw new RangeError('the server secret must be 32+ characters');
  // The text as given (any encoding an operator chose) becomes a 32-byte root key.
  const root = createHmac('sha256', 'shotsmith server secret v1').update(serverSecret).digest();
  return {
    derive(purpose, ...parts) {
      const label = [purpose, ...parts.map(String)];
      for (const part of label) {
        // NUL separates the parts, so no two different lists give the same message.
        if (part.includes('\0')) throw new RangeError('a secret label part contains NUL');
      }
      return createHmac('sha256', root).update(label.join('\0')).digest();
    },
  };
}
