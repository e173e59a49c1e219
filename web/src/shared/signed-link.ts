/**
 * Render links signed in the browser (docs/api.md, "Signed render links"), with WebCrypto:
 * the dashboard's link builder. The server's own code (src/lib/signed-query.ts) is Node's;
 * test/web-signed-link.test.ts holds this one to the same documented vector and to links the
 * server accepts.
 */
export type LinkParam = readonly [name: string, value: string];

const encode = (text: string): string =>
  encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

const byBytes = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every parameter but `signature`, RFC 3986-encoded, sorted by name then value, joined. */
export function canonicalLinkQuery(params: readonly LinkParam[]): string {
  return params
    .filter(([name]) => name !== 'signature')
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort((a, b) => byBytes(a[0], b[0]) || byBytes(a[1], b[1]))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
}

/** Lowercase hex HMAC-SHA256 of the canonical query, keyed with the secret's UTF-8 bytes. */
export async function linkSignature(secret: string, params: readonly LinkParam[]): Promise<string> {
  const bytes = new TextEncoder();
  const key = await crypto.subtle.importKey(
    'raw',
    bytes.encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, bytes.encode(canonicalLinkQuery(params)));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `${base}/v1/render?...&signature=...` for these options, key and expiry (Unix seconds). */
export async function buildRenderLink(options: {
  base: string;
  secret: string;
  keyId: number;
  expires: number;
  params: readonly LinkParam[];
}): Promise<string> {
  const params: LinkParam[] = [
    ...options.params,
    ['key_id', String(options.keyId)],
    ['expires', String(options.expires)],
  ];
  const signature = await linkSignature(options.secret, params);
  const query = [...params, ['signature', signature] as const]
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .join('&');
  return `${options.base}/v1/render?${query}`;
}
