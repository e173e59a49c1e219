/**
 * The playground's request, without React: the form's options, the defaults it starts from,
 * the JSON body they make (only what differs from the API's defaults) and the same request
 * as a curl command.
 */
import type { CaptureRequestBody } from '../../api/types.ts';
import { apiOrigin } from '../../shared/api.ts';
import { normalizeUrl } from '../../shared/format.ts';

/** The form's state, one entry a control, as typed (turned into the API's fields by captureBody). */
export interface Options {
  /**
   * What the capture shows: the page at `url`, `document` as HTML or Markdown, or (`batch`)
   * each URL of `batchUrls` as one job of a batch.
   */
  source: string;
  /** One URL a line (`batch`). */
  batchUrls: string;
  url: string;
  /** The HTML or Markdown document, as typed. */
  document: string;
  /** Where the document stands (its relative links resolve there); empty: nowhere. */
  baseUrl: string;
  format: string;
  width: number;
  height: number;
  fullPage: boolean;
  fresh: boolean;
  scale: number;
  /** Empty: the service's default. */
  userAgent: string;
  locale: string;
  timezone: string;
  /** Degrees, as typed; with both, the page's Geolocation API reports them. */
  latitude: string;
  longitude: string;
  /** An operator proxy's id or the caller's own proxy URL (Pro); empty: none. */
  proxy: string;
  /** A country code the operator's proxies serve (Pro); empty: none. */
  proxyCountry: string;
  /** One of the account's storage destinations (`dst_...`); empty: hosted here only. */
  storageDestination: string;
  /** The key's template under the destination's prefix; empty: the service's `{id}.{ext}`. */
  storagePath: string;
  /** With a destination: whether a copy stays hosted here (`hosted`, default true). */
  storageHosted: boolean;
  print: boolean;
  styles: string;
  scripts: string;
  click: string;
  scrollIntoView: string;
  failOnHttpError: boolean;
  /** Seconds; the API's default is 900. */
  cacheTtl: number;
  /** "x, y, width, height" in CSS px; anything else leaves clip out. */
  clip: string;
  /** One URL pattern per line. */
  blockRequests: string;
  blockResources: string[];
  /** One "Name: value" per line. */
  headers: string;
  /** One "name=value" per line. */
  cookies: string;
  authUser: string;
  authPassword: string;
  blockAds: boolean;
  blockTrackers: boolean;
  blockCookieBanners: boolean;
  /** A preset name; empty: none. With one, width, height and scale are the preset's. */
  device: string;
  mobile: boolean;
  hasTouch: boolean;
  landscape: boolean;
  metadata: boolean;
  pdfPaper: string;
  pdfLandscape: boolean;
  pdfSinglePage: boolean;
  /** The delivered image's size in px, as typed; empty: the rendered size. */
  imageWidth: string;
  imageHeight: string;
  /** With both: cover, contain or fill. */
  imageFit: string;
  /** The page's content kept beside the image: html, text, markdown. */
  content: string[];
}

/** What the form shows before anyone changes it: the API's defaults. */
export const DEFAULT_OPTIONS: Options = {
  source: 'url',
  batchUrls: '',
  url: 'https://example.com',
  document: '',
  baseUrl: '',
  format: 'png',
  width: 1280,
  height: 800,
  fullPage: false,
  fresh: false,
  scale: 1,
  userAgent: '',
  locale: '',
  timezone: '',
  latitude: '',
  longitude: '',
  proxy: '',
  proxyCountry: '',
  storageDestination: '',
  storagePath: '',
  storageHosted: true,
  print: false,
  styles: '',
  scripts: '',
  click: '',
  scrollIntoView: '',
  failOnHttpError: false,
  cacheTtl: 900,
  clip: '',
  blockRequests: '',
  blockResources: [],
  headers: '',
  cookies: '',
  authUser: '',
  authPassword: '',
  blockAds: false,
  blockTrackers: false,
  blockCookieBanners: false,
  device: '',
  mobile: false,
  hasTouch: false,
  landscape: false,
  metadata: false,
  pdfPaper: 'a4',
  pdfLandscape: false,
  pdfSinglePage: false,
  imageWidth: '',
  imageHeight: '',
  imageFit: 'cover',
  content: [],
};

/** The kinds `content` takes, in the API's order. */
export const CONTENT_KINDS = ['html', 'text', 'markdown'] as const;

type ResourceKind = NonNullable<CaptureRequestBody['block_resources']>[number];

/**
 * The request kinds `block_resources` takes, in the API's order. A record keyed by the API
 * document's own list, so a kind added to or taken from the API fails the typecheck here.
 */
const RESOURCE_KIND_SET: Record<ResourceKind, true> = {
  image: true,
  media: true,
  font: true,
  stylesheet: true,
  script: true,
  xhr: true,
  fetch: true,
  websocket: true,
  other: true,
};
export const RESOURCE_KINDS = Object.keys(RESOURCE_KIND_SET) as ResourceKind[];

const lines = (text: string) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);

/** "Name: value" lines as the API's headers object (lines without a colon are left out). */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines(text)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** "name=value" lines as the API's cookies (lines without "=" are left out). */
export function parseCookies(text: string): { name: string; value: string }[] {
  return lines(text).flatMap((line) => {
    const eq = line.indexOf('=');
    return eq > 0 ? [{ name: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim() }] : [];
  });
}

/** "x, y, width, height" as the API's clip, or null. */
export function parseClip(
  text: string,
): { x: number; y: number; width: number; height: number } | null {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length !== 4 || parts.some((p) => p === '')) return null;
  const [x, y, width, height] = parts.map(Number) as [number, number, number, number];
  if (![x, y, width, height].every(Number.isFinite) || x < 0 || y < 0 || width < 1 || height < 1) {
    return null;
  }
  return { x, y, width, height };
}

/** Latitude and longitude as typed, as the API's geolocation, or null (both needed, in range). */
export function parseGeolocation(
  latitude: string,
  longitude: string,
): { latitude: number; longitude: number } | null {
  if (latitude.trim() === '' || longitude.trim() === '') return null;
  const lat = Number(latitude.trim());
  const lon = Number(longitude.trim());
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180) {
    return null;
  }
  return { latitude: lat, longitude: lon };
}

/** An image side as typed: a whole number of px, or null (left out). */
export function parseSide(text: string): number | null {
  const n = Number(text.trim());
  return text.trim() !== '' && Number.isInteger(n) && n > 0 ? n : null;
}

/** The most requests a batch takes (docs/api.md, "Batches"). */
export const MAX_BATCH = 50;

/** Where the request goes: one capture, or a batch. */
export const requestPath = (o: Options): string =>
  o.source === 'batch' ? '/v1/screenshots/batch' : '/v1/screenshots';

/**
 * The JSON body for the options, leaving out what equals the API's defaults; for a batch, one
 * request a URL, each with the same options.
 */
export function captureBody(o: Options): Record<string, unknown> {
  if (o.source === 'batch') {
    const urls = lines(o.batchUrls).slice(0, MAX_BATCH);
    const shared = optionFields(o);
    return { requests: urls.map((url) => ({ url: normalizeUrl(url), ...shared })) };
  }
  return { ...source(o), ...optionFields(o) };
}

/** Every field but what the capture shows. */
function optionFields(o: Options): Record<string, unknown> {
  return {
    format: o.format,
    ...(o.device ? { device: o.device } : { width: o.width, height: o.height }),
    ...(o.fullPage && o.format !== 'pdf' ? { full_page: true } : {}),
    ...(o.fresh ? { fresh: true } : {}),
    ...(o.scale !== 1 && !o.device ? { device_scale_factor: o.scale } : {}),
    ...(o.userAgent.trim() ? { user_agent: o.userAgent.trim() } : {}),
    ...(o.locale.trim() ? { locale: o.locale.trim() } : {}),
    ...(o.timezone.trim() ? { timezone: o.timezone.trim() } : {}),
    ...(parseGeolocation(o.latitude, o.longitude)
      ? { geolocation: parseGeolocation(o.latitude, o.longitude) }
      : {}),
    ...(o.proxy.trim() ? { proxy: o.proxy.trim() } : {}),
    ...(o.proxyCountry.trim() ? { proxy_country: o.proxyCountry.trim() } : {}),
    ...(o.print ? { media_type: 'print' } : {}),
    ...(o.styles.trim() ? { styles: o.styles } : {}),
    ...(o.scripts.trim() ? { scripts: o.scripts } : {}),
    ...(o.click.trim() ? { click: o.click.trim() } : {}),
    ...(o.scrollIntoView.trim() ? { scroll_into_view: o.scrollIntoView.trim() } : {}),
    ...(o.failOnHttpError ? { fail_on_http_error: true } : {}),
    ...(o.cacheTtl !== 900 ? { cache_ttl: o.cacheTtl } : {}),
    ...(!o.fullPage && o.format !== 'pdf' && parseClip(o.clip) ? { clip: parseClip(o.clip) } : {}),
    ...(lines(o.blockRequests).length > 0 ? { block_requests: lines(o.blockRequests) } : {}),
    ...(o.blockResources.length > 0 ? { block_resources: o.blockResources } : {}),
    ...(Object.keys(parseHeaders(o.headers)).length > 0
      ? { headers: parseHeaders(o.headers) }
      : {}),
    ...(parseCookies(o.cookies).length > 0 ? { cookies: parseCookies(o.cookies) } : {}),
    ...(o.authUser.trim()
      ? { http_auth: { username: o.authUser.trim(), password: o.authPassword } }
      : {}),
    ...(o.blockAds ? { block_ads: true } : {}),
    ...(o.blockTrackers ? { block_trackers: true } : {}),
    ...(o.blockCookieBanners ? { block_cookie_banners: true } : {}),
    ...(o.mobile ? { mobile: true } : {}),
    ...(o.hasTouch ? { has_touch: true } : {}),
    ...(o.landscape ? { landscape: true } : {}),
    ...(o.metadata ? { metadata: true } : {}),
    ...(o.format === 'pdf' && o.pdfPaper !== 'a4' ? { pdf_paper: o.pdfPaper } : {}),
    ...(o.format === 'pdf' && o.pdfLandscape ? { pdf_landscape: true } : {}),
    ...(o.format === 'pdf' && o.pdfSinglePage ? { pdf_single_page: true } : {}),
    ...imageSize(o),
    ...storage(o),
    ...(o.content.length > 0
      ? { content: CONTENT_KINDS.filter((k) => o.content.includes(k)) }
      : {}),
  };
}

/** The page (`url`) or the document (`html`, `markdown`, with its `base_url`). */
function source(o: Options): Record<string, unknown> {
  if (o.source !== 'html' && o.source !== 'markdown') {
    return { url: normalizeUrl(o.url) || 'https://example.com' };
  }
  const base = normalizeUrl(o.baseUrl);
  return { [o.source]: o.document, ...(base ? { base_url: base } : {}) };
}

/** The `storage` option: the destination, then only what differs from its defaults. */
function storage(o: Options): Record<string, unknown> {
  if (!o.storageDestination) return {};
  return {
    storage: {
      destination: o.storageDestination,
      ...(o.storagePath.trim() ? { path: o.storagePath.trim() } : {}),
      ...(o.storageHosted ? {} : { hosted: false }),
    },
  };
}

function imageSize(o: Options): Record<string, unknown> {
  const width = parseSide(o.imageWidth);
  const height = parseSide(o.imageHeight);
  if (o.format === 'pdf') return {};
  return {
    ...(width !== null ? { image_width: width } : {}),
    ...(height !== null ? { image_height: height } : {}),
    ...(width !== null && height !== null && o.imageFit !== 'cover'
      ? { image_fit: o.imageFit }
      : {}),
  };
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlCommand(
  body: Record<string, unknown>,
  key: string,
  path = '/v1/screenshots',
): string {
  return [
    `curl -X POST ${apiOrigin()}${path} \\`,
    `  -H "X-API-Key: ${key}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d ${shellQuote(JSON.stringify(body, null, 2).replaceAll('\n', '\n  '))}`,
  ].join('\n');
}
