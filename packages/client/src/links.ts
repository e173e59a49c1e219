/**
 * Signed render links (GET /v1/render): the canonical query is every parameter but
 * `signature`, each name and value percent-encoded as RFC 3986, sorted by encoded name then
 * encoded value (byte order), joined with `&`; the signature is the lowercase hex
 * HMAC-SHA256 of it keyed with the UTF-8 bytes of the signing secret. WebCrypto only, so it
 * runs in Node 20+, browsers, Deno, Bun and edge runtimes.
 */
export type LinkParam = readonly [name: string, value: string];

/** A capture option's value in a link: lists are repeated parameters; objects are refused. */
export type LinkOptionValue = string | number | boolean | ReadonlyArray<string | number>;

const MAX_LIFETIME_SECONDS = 7 * 24 * 3600;

export function encodeRfc3986(text: string): string {
  return encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function canonicalQuery(params: readonly LinkParam[]): string {
  return params
    .filter(([name]) => name !== 'signature')
    .map(([name, value]) => [encodeRfc3986(name), encodeRfc3986(value)] as const)
    .sort((a, b) => byBytes(a[0], b[0]) || byBytes(a[1], b[1]))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

const hex = (bytes: ArrayBuffer): string =>
  Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');

export async function signQuery(secret: string, params: readonly LinkParam[]): Promise<string> {
  const utf8 = new TextEncoder();
  const key = await crypto.subtle.importKey(
    'raw',
    utf8.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  return hex(await crypto.subtle.sign('HMAC', key, utf8.encode(canonicalQuery(params))));
}

/**
 * The options of a capture as link parameters: `true`/`false`, numbers, lists repeated. A
 * `proxy` URL is refused as the service refuses it: whoever holds the link would read the
 * proxy's credentials in it (an operator proxy's id is fine).
 */
export function linkParams(
  options: Readonly<Record<string, LinkOptionValue | undefined>>,
): LinkParam[] {
  const params: LinkParam[] = [];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (name === 'proxy' && String(value).includes('://')) {
      throw new TypeError(
        "proxy is a URL, and a render link cannot carry one (its credentials would be in the link); name an operator proxy's id",
      );
    }
    if (Array.isArray(value)) {
      for (const item of value) params.push([name, String(item)]);
    } else if (typeof value === 'object' && value !== null) {
      throw new TypeError(`${name} is an object, and a render link cannot carry objects`);
    } else {
      params.push([name, String(value)]);
    }
  }
  return params;
}

export interface RenderLinkOptions {
  /** The service's origin, e.g. `https://shots.example.com`. */
  baseUrl: string;
  /** The API key's id (`id` in POST /v1/keys), not the key. */
  keyId: number;
  /** The key's signing secret (`sig_live_...`). */
  signingSecret: string;
  /** Capture options with the body's names (`url` required). */
  options: Readonly<Record<string, LinkOptionValue | undefined>> & { url: string };
  /** When the link stops working: Unix seconds or a Date; default an hour from now. */
  expires?: number | Date;
}

/** A signed `GET /v1/render` URL for `<img src>`. */
export async function renderLink(link: RenderLinkOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const expires =
    link.expires === undefined
      ? now + 3600
      : link.expires instanceof Date
        ? Math.floor(link.expires.getTime() / 1000)
        : Math.floor(link.expires);
  if (expires - now > MAX_LIFETIME_SECONDS) {
    throw new RangeError(`expires must be at most ${MAX_LIFETIME_SECONDS} seconds (7 days) ahead`);
  }
  const params: LinkParam[] = [
    ...linkParams(link.options),
    ['key_id', String(link.keyId)],
    ['expires', String(expires)],
  ];
  const signature = await signQuery(link.signingSecret, params);
  const query = [...params, ['signature', signature] as const]
    .map(([name, value]) => `${encodeRfc3986(name)}=${encodeRfc3986(value)}`)
    .join('&');
  return `${link.baseUrl.replace(/\/+$/, '')}/v1/render?${query}`;
}
