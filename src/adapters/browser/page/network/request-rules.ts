/**
 * What the page's request filter does with each request of a capture that asks for it
 * (`block_requests`, `block_resources`, `block_ads`, `block_trackers`, `headers`,
 * `http_auth`): block it, or let it go with the extra headers meant for the target. Pure:
 * CapturePage feeds it what Chromium's request interception reports.
 *
 * The page's own document (the main frame's navigation, each redirect hop) is never blocked:
 * the caller asked for it. Extra headers and credentials go to the target's own origin only
 * (`sameOrigin`), hop by hop, so a redirect elsewhere does not carry them.
 */
import type { RenderOptions, ResourceKind } from '../../../../domain/captures/renderer.ts';

export interface InterceptedRequest {
  url: string;
  /** puppeteer's resourceType(): document, stylesheet, image, xhr, ... */
  resourceType: string;
  /** The main frame's navigation (the target or a redirect hop of it). */
  mainDocument: boolean;
  /** The URL of the document that made the request ('' when unknown). */
  sourceUrl: string;
}

export type RequestVerdict =
  | { block: true }
  | { block: false; headers: Readonly<Record<string, string>> | null };

export interface RequestRules {
  decide(request: InterceptedRequest): RequestVerdict;
}

/** A filter list matcher: whether a request is one of its ads or trackers. */
export type RequestMatcher = (request: InterceptedRequest) => boolean;

const KIND_OF: Readonly<Record<string, ResourceKind>> = {
  image: 'image',
  media: 'media',
  font: 'font',
  stylesheet: 'stylesheet',
  script: 'script',
  xhr: 'xhr',
  fetch: 'fetch',
  websocket: 'websocket',
};

/** The `block_resources` kind of a request; null for documents and CORS preflights. */
export function resourceKind(resourceType: string): ResourceKind | null {
  if (resourceType === 'document' || resourceType === 'preflight') return null;
  return KIND_OF[resourceType] ?? 'other';
}

/**
 * A `*` glob matched against the whole of `text`, case-insensitively. Linear in the text for
 * each literal part (leftmost matching is exact when `*` is the only wildcard), so a hostile
 * pattern cannot make it backtrack.
 */
export function globMatcher(pattern: string): (text: string) => boolean {
  const parts = pattern.toLowerCase().split('*');
  const first = parts[0] ?? '';
  const last = parts.length > 1 ? (parts.at(-1) ?? '') : null;
  const middle = parts.slice(1, -1).filter((p) => p !== '');
  return (input) => {
    const text = input.toLowerCase();
    if (last === null) return text === first;
    if (!text.startsWith(first) || text.length < first.length + last.length) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (const part of middle) {
      const found = text.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return text.endsWith(last);
  };
}

/**
 * Whether a request goes to the target's own origin: the same scheme, host and port, or the
 * same host over https on 443 when the target is http on 80 (a site's own upgrade).
 */
export function sameOrigin(target: URL, url: string): boolean {
  let other: URL;
  try {
    other = new URL(url);
  } catch {
    return false;
  }
  if (other.origin === target.origin) return true;
  return (
    target.protocol === 'http:' &&
    target.port === '' &&
    other.protocol === 'https:' &&
    other.port === '' &&
    other.hostname === target.hostname
  );
}

/**
 * The `*` globs WebSocket URLs are refused by (page-scripts.ts, blockWebSockets): Chromium's
 * request interception never pauses a WebSocket handshake, nor does its blocklist refuse one.
 */
export function socketBlockPatterns(o: RenderOptions): string[] {
  return o.blockResources.includes('websocket') ? ['*'] : o.blockRequests;
}

/** The headers the target's own requests carry, or null when the options add none. */
function targetHeaders(o: RenderOptions): Record<string, string> | null {
  const headers: Record<string, string> = {};
  for (const h of o.headers) headers[h.name] = h.value;
  if (o.httpAuth) {
    const token = Buffer.from(`${o.httpAuth.username}:${o.httpAuth.password}`, 'utf8');
    headers.Authorization = `Basic ${token.toString('base64')}`;
  }
  return Object.keys(headers).length > 0 ? headers : null;
}

/**
 * The rules of a capture, or null when it needs none (its requests are then not intercepted
 * at all, which costs nothing). `lists` are the filter-list matchers `block_ads` and
 * `block_trackers` turn on.
 */
export function requestRulesFor(
  o: RenderOptions,
  lists: readonly RequestMatcher[] = [],
): RequestRules | null {
  const patterns = o.blockRequests.map(globMatcher);
  const kinds = new Set<ResourceKind>(o.blockResources);
  const headers = targetHeaders(o);
  if (patterns.length === 0 && kinds.size === 0 && headers === null && lists.length === 0) {
    return null;
  }
  const target = new URL(o.url);
  const blocked = (r: InterceptedRequest): boolean => {
    if (r.mainDocument) return false;
    const kind = resourceKind(r.resourceType);
    if (kind !== null && kinds.has(kind)) return true;
    if (patterns.some((matches) => matches(r.url))) return true;
    return lists.some((matches) => matches(r));
  };
  return {
    decide: (r) =>
      blocked(r)
        ? { block: true }
        : { block: false, headers: headers && sameOrigin(target, r.url) ? headers : null },
  };
}
