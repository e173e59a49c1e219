/**
 * The renderer port: what the capture pipeline asks of a browser. The domain owns it;
 * `adapters/browser/` implements it (Chromium behind the egress proxy), and tests or
 * benchmarks may stand in their own.
 */
import type { ContentKind, ImageFormat } from './formats.ts';
import type { CaptureWarning, WarningCode } from './warnings.ts';

/** What a capture produces: an image, or (`pdf`) a document; formats.ts is their table. */
export type { ImageFormat };

/** `pdf_paper` sizes. */
export const PDF_PAPERS = ['a4', 'letter', 'legal', 'a3', 'tabloid'] as const;
export type PdfPaper = (typeof PDF_PAPERS)[number];
export type WaitUntil = 'load' | 'domcontentloaded' | 'networkidle0' | 'networkidle2';

/**
 * One capture, every option resolved (defaults filled, plan rules applied) by the option
 * modules in `options/`. A new render option adds its field here.
 */
export interface RenderOptions {
  /** The address the page is opened at: the url, or where the document stands. */
  url: string;
  /**
   * The document shown at `url` instead of fetching it (`html`); null: none (a page fetched
   * from the url, or Markdown).
   */
  html: string | null;
  /** Markdown shown at `url` in the service's stylesheet (`markdown`); null: none. */
  markdown: string | null;
  format: ImageFormat;
  /** 1-100, used for jpeg/webp. */
  quality: number;
  width: number;
  height: number;
  /**
   * The plan's widest viewport (CSS px): no image is wider than this x deviceScaleFactor, an
   * element wider than it included.
   */
  maxWidth: number;
  fullPage: boolean;
  deviceScaleFactor: number;
  waitUntil: WaitUntil;
  /** ms */
  delay: number;
  waitForSelector: string | null;
  selector: string | null;
  darkMode: boolean;
  reducedMotion: boolean;
  hideSelectors: string[];
  omitBackground: boolean;
  /** null: Chromium's own. Printable ASCII, checked. */
  userAgent: string | null;
  /** A canonical BCP 47 tag; null: Chromium's own. */
  locale: string | null;
  /** An IANA zone name; null: UTC. */
  timezone: string | null;
  mediaType: MediaType;
  /** CSS injected after load; null: none. */
  styles: string | null;
  /** JavaScript run after load; null: none. */
  scripts: string | null;
  /** A selector clicked after load; null: none. */
  click: string | null;
  /** A selector scrolled to before a viewport capture; null: none. */
  scrollIntoView: string | null;
  /** A 4xx or 5xx answer of the target ends the capture (target_error). */
  failOnHttpError: boolean;
  /** Warnings that end the capture (422 capture_rejected) instead of being answered. */
  failOn: readonly WarningCode[];
  /** A region of the page (CSS px of the document) captured alone; null: none. */
  clip: ClipRect | null;
  /** URL patterns (`*`: any characters; matched against the whole URL) not requested. */
  blockRequests: string[];
  /** Kinds of request not made; sorted, no repeats. */
  blockResources: ResourceKind[];
  /** Extra request headers, sent to the target's own origin only; in request order. */
  headers: RequestHeader[];
  /** Cookies set for the target before it loads. */
  cookies: CookieSpec[];
  /** Basic credentials, sent to the target's own origin only; null: none. */
  httpAuth: HttpCredentials | null;
  /** Requests EasyList matches are not made; the ad boxes it names are hidden. */
  blockAds: boolean;
  /** Requests EasyPrivacy matches are not made. */
  blockTrackers: boolean;
  /** Consent banners dismissed (consent refused where offered), else hidden. */
  blockCookieBanners: boolean;
  /** Mobile emulation: the page's meta viewport, overlay scrollbars, a mobile screen. */
  mobile: boolean;
  /** Touch events and `navigator.maxTouchPoints` (5). */
  hasTouch: boolean;
  /** Read the page's title, description, Open Graph tags and icon (`metadata`). */
  metadata: boolean;
  /** `format: pdf` only: the paper, its orientation, backgrounds, one page as tall as the content. */
  pdfPaper: PdfPaper;
  pdfLandscape: boolean;
  pdfPrintBackground: boolean;
  pdfSinglePage: boolean;
  /** The delivered image's size in px (null: the rendered size); see imageFit. */
  imageWidth: number | null;
  imageHeight: number | null;
  /** With both sides: how the image meets them (cover crops from the top centre). */
  imageFit: ImageFit;
  /** The page's content to keep beside the image (`content`), in CONTENT_KINDS order. */
  content: readonly ContentKind[];
  /** Where the page's traffic goes out (`proxy`, `proxy_country`); null: straight out. */
  proxy: ProxyChoice | null;
  /** The position the page's Geolocation API reports (permission granted); null: denied. */
  geolocation: Geolocation | null;
}

/**
 * A capture's way out (docs/proxies.md): an operator proxy by id, any operator proxy serving a
 * country (chosen in turn at render time), or the caller's own proxy URL (credentials and all:
 * never logged, never answered, in cache keys only as an HMAC).
 */
export type ProxyChoice =
  | { kind: 'operator'; id: string }
  | { kind: 'country'; country: string }
  | { kind: 'url'; url: string };

/** `geolocation`: degrees, and the accuracy in metres. */
export interface Geolocation {
  latitude: number;
  longitude: number;
  accuracy: number;
}

/** One kind of the page's content as read: its UTF-8 bytes, cut at the bound. */
export interface PageContentFile {
  bytes: Buffer;
  /** Cut at BOUNDS.capture.maxContentBytes. */
  truncated: boolean;
}

export type PageContent = Partial<Record<ContentKind, PageContentFile>>;

/** `image_fit` values. */
export const IMAGE_FITS = ['cover', 'contain', 'fill'] as const;
export type ImageFit = (typeof IMAGE_FITS)[number];

/** `metadata: true`: what the page says about itself (absent values are null). */
export interface PageMetadata {
  title: string | null;
  description: string | null;
  /** The page's URL when captured (after redirects). */
  final_url: string;
  http_status: number | null;
  og: { title: string | null; description: string | null; image: string | null };
  icon_url: string | null;
}

/** `block_resources` values: what kind of request a page makes. */
export const RESOURCE_KINDS = [
  'image',
  'media',
  'font',
  'stylesheet',
  'script',
  'xhr',
  'fetch',
  'websocket',
  'other',
] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];

export interface RequestHeader {
  name: string;
  value: string;
}

export interface CookieSpec {
  name: string;
  value: string;
  /** A parent domain of the target's host (the cookie then reaches its subdomains too); null: the target's host only. */
  domain: string | null;
  path: string;
  secure: boolean;
  httpOnly: boolean;
  sameSite: 'Strict' | 'Lax' | 'None' | null;
}

export interface HttpCredentials {
  username: string;
  password: string;
}

export interface ClipRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export type MediaType = 'screen' | 'print';

export interface RenderResult {
  image: Buffer;
  format: ImageFormat;
  /** Device pixels of the image; for a PDF, its first page in points (1/72 inch). */
  width: number;
  height: number;
  truncated: boolean;
  /** What may be wrong with it (warnings.ts); none of the options' `failOn`. */
  warnings: CaptureWarning[];
  targetStatus: number | null;
  /** null unless `metadata` was asked for. */
  metadata: PageMetadata | null;
  /** The kinds `content` asked for; empty without it. */
  content: PageContent;
  renderMs: number;
  /** ms of the wait for the page at rest (0 when it was skipped). */
  settleMs: number;
}

/**
 * Who a capture is for (docs/security.md: fair share and isolation). `id` is
 * `user:<id>` for an account, `demo:<ip or /64>` for the demo; `maxConcurrent` is the plan's
 * `concurrent_renders`.
 */
export interface RenderClient {
  id: string;
  maxConcurrent: number;
}

export interface RenderControl {
  /** Epoch ms, includes queue time. */
  deadline: number;
  /** Aborted e.g. when the API key is revoked mid-render. */
  signal?: AbortSignal;
  /**
   * Render slots are shared fairly among clients, and a browser context that rendered for one
   * client never renders for another. Without it the capture counts as one anonymous client
   * with no limit (tests and benchmarks); the service always sets it.
   */
  client?: RenderClient;
}

/**
 * Where a capture was when its deadline passed, as a 504 `render_timeout` names it
 * (docs/errors.md): waiting for a render slot, for the browser or a page, for the target's
 * main document to answer (`navigation`), for the `wait_until` event (`load`), for the network
 * to go quiet, for `wait_for_selector`, in `delay`, in the page actions (styles, scripts,
 * click, banners), for the page to come to rest (`settle`), or making the image (`capture`).
 */
export const RENDER_PHASES = [
  'queue',
  'browser',
  'navigation',
  'load',
  'network',
  'selector',
  'delay',
  'actions',
  'settle',
  'capture',
] as const;
export type RenderPhase = (typeof RENDER_PHASES)[number];

/** At most this many of the requests still loading are named by a timeout. */
export const MAX_PENDING_NAMED = 10;

/**
 * The extra fields of a renderer's `render_timeout` (AppError body): its phase and up to
 * MAX_PENDING_NAMED requests still loading, each as origin and path (no query, which may
 * hold secrets of the page), at most 200 characters.
 */
export interface RenderTimeoutDetails {
  phase: RenderPhase;
  pending_requests: string[];
}

export interface Renderer {
  render(options: RenderOptions, control: RenderControl): Promise<RenderResult>;
  stats(): { inUse: number; queued: number; restarts: number; captures: number };
  ready(): boolean;
  close(): Promise<void>;
}
