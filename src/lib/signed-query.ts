import { createHmac } from 'node:crypto';

/**
 * Signed render links (docs/api.md, "Signed render links"): the canonical query is every
 * parameter but `signature`, each name and value percent-encoded as RFC 3986, the pairs
 * sorted by encoded name then encoded value (byte order), each written `name=value` and
 * joined with `&`; the signature is the lowercase hex HMAC-SHA256 of it, keyed with the
 * UTF-8 bytes of the signing secret (`sig_live_...`, the whole text).
 *
 * Pure and dependency-free: the client library's builder must agree with it byte for byte.
 */
export type QueryPair = readonly [name: string, value: string];

export const SIGNATURE_PARAM = 'signature';

/** RFC 3986: the unreserved characters `A-Z a-z 0-9 - . _ ~` as they are, other UTF-8 bytes %XX. */
export function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

export class QueryError extends Error {}

/**
 * A raw query string (after `?`) as name/value pairs in order, decoded. `+` is a space, as
 * `application/x-www-form-urlencoded` (URLSearchParams, HTML forms) writes it; a literal plus
 * is `%2B`. Empty pieces (`a=1&&b=2`) are skipped; a piece without `=` has an empty value.
 */
export function parseQuery(raw: string): QueryPair[] {
  const pairs: QueryPair[] = [];
  for (const piece of raw.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const name = decodePart(eq === -1 ? piece : piece.slice(0, eq));
    const value = eq === -1 ? '' : decodePart(piece.slice(eq + 1));
    pairs.push([name, value]);
  }
  return pairs;
}

function decodePart(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw new QueryError(`query part "${part.slice(0, 64)}" is not valid percent-encoded UTF-8`);
  }
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The text that is signed: every pair but `signature`, encoded, sorted, joined. */
export function canonicalQuery(pairs: Iterable<QueryPair>): string {
  const encoded: Array<[string, string]> = [];
  for (const [name, value] of pairs) {
    if (name !== SIGNATURE_PARAM) encoded.push([encodeRfc3986(name), encodeRfc3986(value)]);
  }
  // Encoded text is ASCII, so `<` is byte order: the same on every platform and language.
  encoded.sort((a, b) => compare(a[0], b[0]) || compare(a[1], b[1]));
  return encoded.map(([name, value]) => `${name}=${value}`).join('&');
}

/** Lowercase hex HMAC-SHA256 of the canonical query, keyed with the secret's UTF-8 bytes. */
export function signQuery(secret: string, pairs: Iterable<QueryPair>): string {
  return createHmac('sha256', secret).update(canonicalQuery(pairs)).digest('hex');
}

/** The query string of a signed link: the pairs as given, then `signature`. */
export function signedQueryString(secret: string, pairs: readonly QueryPair[]): string {
  const signature = signQuery(secret, pairs);
  return [...pairs, [SIGNATURE_PARAM, signature] as const]
    .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
    .join('&');
}
