/**
 * Proxy addresses as a capture names them (`proxy`) and as PROXIES_FILE lists them
 * (docs/proxies.md): `scheme://[user[:password]@]host[:port]`, scheme http, https, socks5 or
 * socks5h. Pure: no lookup, no connection. Messages never repeat the value, which may hold a
 * password.
 */
import { AppError } from '../errors.ts';

export const PROXY_SCHEMES = ['http', 'https', 'socks5', 'socks5h'] as const;
export type ProxyScheme = (typeof PROXY_SCHEMES)[number];

const DEFAULT_PORTS: Record<ProxyScheme, number> = {
  http: 80,
  https: 443,
  socks5: 1080,
  socks5h: 1080,
};

/** An operator proxy's id (`proxy: "<id>"`): what GET /v1/proxies lists. */
export const PROXY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export interface ProxyAddress {
  scheme: ProxyScheme;
  /** A name, or an IP literal without brackets. */
  host: string;
  port: number;
  /** Percent-decoded; null: none. */
  username: string | null;
  password: string | null;
}

/** Whether a `proxy` value names a URL rather than an operator proxy's id. */
export const isProxyUrl = (value: string): boolean => value.includes('://');

/**
 * `raw` as a proxy address, or an AppError invalid_request naming `field` (never echoing the
 * value). A path, query or fragment is refused: a proxy is a host and a port.
 */
export function parseProxyUrl(raw: string, field: string): ProxyAddress {
  const invalid = (why: string) => new AppError('invalid_request', `${field} ${why}`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('is not a valid proxy URL (scheme://[user:password@]host:port)');
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (!(PROXY_SCHEMES as readonly string[]).includes(scheme)) {
    throw invalid('must be an http, https, socks5 or socks5h URL');
  }
  if (url.hostname === '') throw invalid('must name a host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw invalid('must be scheme://[user:password@]host:port, with no path, query or fragment');
  }
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      throw invalid('has credentials that are not valid percent-encoding');
    }
  };
  const username = url.username === '' ? null : decode(url.username);
  const password = url.password === '' ? null : decode(url.password);
  for (const part of [username, password]) {
    if (
      part !== null &&
      [...part].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)
    ) {
      throw invalid('must not hold control characters in its credentials');
    }
  }
  if (password !== null && username === null) throw invalid('has a password but no user name');
  const typed = scheme as ProxyScheme;
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    scheme: typed,
    host,
    port: url.port === '' ? DEFAULT_PORTS[typed] : Number(url.port),
    username,
    password,
  };
}

/** `scheme://host:port` of an address: what logs and messages may show (no credentials). */
export function proxyLabel(address: ProxyAddress): string {
  const host = address.host.includes(':') ? `[${address.host}]` : address.host;
  return `${address.scheme}://${host}:${address.port}`;
}
