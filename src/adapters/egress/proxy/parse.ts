/** Reading what a client asked for: request targets and the headers that may be forwarded. */

/** Connection-level headers a proxy must not forward (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Splits a CONNECT authority (`host:port`, `[v6]:port`). null when malformed. */
export function parseAuthority(
  authority: string | undefined,
): { host: string; port: number } | null {
  if (!authority || authority.length > 300) return null;
  let host: string;
  let portText: string;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1 || authority[close + 1] !== ':') return null;
    host = authority.slice(0, close + 1);
    portText = authority.slice(close + 2);
  } else {
    const colon = authority.lastIndexOf(':');
    if (colon <= 0) return null;
    host = authority.slice(0, colon);
    portText = authority.slice(colon + 1);
    if (host.includes(':')) return null;
  }
  if (portText.length === 0 || portText.length > 5) return null;
  for (let i = 0; i < portText.length; i++) {
    const c = portText.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  return { host, port };
}

/** The absolute-form target of a plain proxy request (`GET http://host/x`). null otherwise. */
export function parseAbsoluteTarget(target: string | undefined): URL | null {
  if (!target?.toLowerCase().startsWith('http://')) return null;
  try {
    const url = new URL(target);
    return url.protocol === 'http:' && url.hostname !== '' ? url : null;
  } catch {
    return null;
  }
}

/** The port an absolute `http:` target names, 80 when it names none. */
export const targetPort = (url: URL): number => (url.port === '' ? 80 : Number(url.port));

/** Raw header pairs without hop-by-hop fields, those named in Connection, and Host. */
export function forwardableHeaders(raw: readonly string[], keepUpgrade: boolean): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] ?? '').toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    // The egress proxy's own marks (x-egress-*) come from it alone, never from upstream.
    if (lower === 'host' || lower.startsWith('x-egress-')) continue;
    const upgradeField = lower === 'connection' || lower === 'upgrade';
    if (!(keepUpgrade && upgradeField) && (HOP_BY_HOP.has(lower) || named.has(lower))) continue;
    out.push(name, raw[i + 1] as string);
  }
  return out;
}
