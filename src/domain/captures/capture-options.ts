import { type Static, type TOptional, Type } from 'typebox';
import { hmacSha256Hex, sha256Hex } from '../../lib/crypto.ts';
import type { SecretDeriver } from '../../lib/server-secret.ts';
import type { Plan } from '../plans.ts';
import { asyncCapture } from './options/async.ts';
import { blockAds } from './options/block-ads.ts';
import { blockCookieBanners } from './options/block-cookie-banners.ts';
import { blockRequests } from './options/block-requests.ts';
import { blockResources } from './options/block-resources.ts';
import { blockTrackers } from './options/block-trackers.ts';
import { cacheTtl } from './options/cache-ttl.ts';
import { click } from './options/click.ts';
import { clip } from './options/clip.ts';
import { content } from './options/content.ts';
import { cookies } from './options/cookies.ts';
import { darkMode } from './options/dark-mode.ts';
import type {
  CaptureOption,
  CredentialDigest,
  KeyedOptions,
  ResolvedCapture,
  StorageRequest,
} from './options/define.ts';
import { delay } from './options/delay.ts';
import { device } from './options/device.ts';
import { deviceScaleFactor } from './options/device-scale-factor.ts';
import { baseUrl, html, markdown } from './options/document.ts';
import { failOn } from './options/fail-on.ts';
import { failOnHttpError } from './options/fail-on-http-error.ts';
import { format } from './options/format.ts';
import { fresh } from './options/fresh.ts';
import { fullPage } from './options/full-page.ts';
import { geolocation } from './options/geolocation.ts';
import { hasTouch } from './options/has-touch.ts';
import { headers } from './options/headers.ts';
import { height } from './options/height.ts';
import { hideSelectors } from './options/hide-selectors.ts';
import { httpAuth } from './options/http-auth.ts';
import { imageFit, imageHeight, imageWidth } from './options/image-size.ts';
import { landscape } from './options/landscape.ts';
import { locale } from './options/locale.ts';
import { mediaType } from './options/media-type.ts';
import { metadata } from './options/metadata.ts';
import { mobile } from './options/mobile.ts';
import { omitBackground } from './options/omit-background.ts';
import { pdfLandscape, pdfPaper, pdfPrintBackground, pdfSinglePage } from './options/pdf.ts';
import { proxy, proxyCountry } from './options/proxy.ts';
import { quality } from './options/quality.ts';
import { reducedMotion } from './options/reduced-motion.ts';
import { responseType } from './options/response-type.ts';
import { scripts } from './options/scripts.ts';
import { scrollIntoView } from './options/scroll-into-view.ts';
import { selector } from './options/selector.ts';
import { storage } from './options/storage.ts';
import { styles } from './options/styles.ts';
import { timezone } from './options/timezone.ts';
import { url } from './options/url.ts';
import { userAgent } from './options/user-agent.ts';
import { waitForSelector } from './options/wait-for-selector.ts';
import { waitUntil } from './options/wait-until.ts';
import { webhookUrl } from './options/webhook-url.ts';
import { width } from './options/width.ts';
import type { RenderOptions } from './renderer.ts';

/**
 * Adding an option (say `block_ads`):
 *  1. `options/block-ads.ts`: copy a neighbour; its schema (with the description the API
 *     document shows), `resolve` (default, plan rule) and `cacheKey` (undefined at its default);
 *  2. add it at the end of CAPTURE_OPTIONS below, and its resolved field to RenderOptions
 *     (`renderer.ts`, the browser's contract);
 *  3. its page step in `adapters/browser/page/steps/option-steps.ts` (typecheck asks for it);
 *  4. a rule test in `capture-options.test.ts`, a render test under `test/browser/`, and
 *     `npm run openapi`.
 *
 * Every capture option, one module each (`options/`). The request schema, the OpenAPI
 * document, the plan rules and the cache key are all walks of this table. Its order is the
 * order of the request's fields (in the document, and for the validator, which reports the
 * first bad field) and of the plan rules (the first refusal is the one reported). New options
 * go at the end.
 */
export const CAPTURE_OPTIONS = [
  url,
  format,
  width,
  height,
  fullPage,
  quality,
  fresh,
  deviceScaleFactor,
  waitUntil,
  delay,
  waitForSelector,
  selector,
  darkMode,
  reducedMotion,
  hideSelectors,
  omitBackground,
  userAgent,
  locale,
  timezone,
  mediaType,
  styles,
  scripts,
  click,
  scrollIntoView,
  failOnHttpError,
  failOn,
  cacheTtl,
  clip,
  blockRequests,
  blockResources,
  headers,
  cookies,
  httpAuth,
  blockAds,
  blockTrackers,
  blockCookieBanners,
  device,
  mobile,
  hasTouch,
  landscape,
  metadata,
  pdfPaper,
  pdfLandscape,
  pdfPrintBackground,
  pdfSinglePage,
  responseType,
  asyncCapture,
  webhookUrl,
  imageWidth,
  imageHeight,
  imageFit,
  html,
  markdown,
  baseUrl,
  content,
  proxy,
  proxyCountry,
  geolocation,
  storage,
] as const;

type AnyOption = (typeof CAPTURE_OPTIONS)[number];
export type CaptureOptionName = AnyOption['name'];

type RequestProperties = {
  [O in AnyOption as O['name']]: O extends { required: true }
    ? O['schema']
    : TOptional<O['schema']>;
};

/** The body of POST /v1/screenshots: one field per option, nothing else. */
export const CaptureRequest = Type.Object(
  Object.fromEntries(
    CAPTURE_OPTIONS.map((o) => [o.name, o.required ? o.schema : Type.Optional(o.schema)]),
  ) as RequestProperties,
  { additionalProperties: false },
);

/** A capture request after schema validation (shapes and ranges already checked). */
export type CaptureInput = Static<typeof CaptureRequest>;

/**
 * Applies the plan's rules to a request: refuses what the plan does not allow (400
 * plan_restriction), caps the viewport at the plan's maximum, fills defaults.
 */
export function resolveCaptureOptions(
  input: CaptureInput,
  url: URL,
  plan: Readonly<Plan>,
): {
  render: RenderOptions;
  fresh: boolean;
  cacheTtlMs: number;
  storage: StorageRequest | null;
} {
  const resolved: Partial<ResolvedCapture> = {};
  const fields = input as Record<string, unknown>;
  for (const option of CAPTURE_OPTIONS as readonly CaptureOption[]) {
    const value = fields[option.name];
    Object.assign(resolved, option.resolve(value, { plan, url, resolved, input: fields }));
  }
  // Every field is set: options/options.test.ts resolves a bare request and checks them all.
  const { fresh, cacheTtlMs, storage: copy, ...render } = resolved as ResolvedCapture;
  // No copy here: nothing cached to look up either.
  if (copy?.hosted === false) return { render, fresh: true, cacheTtlMs: 0, storage: copy };
  return { render, fresh, cacheTtlMs, storage: copy };
}

/**
 * The key's parts go in name order, so a key does not depend on the table's order; sorted
 * once here rather than on every request (a cache hit computes a key).
 */
const OPTIONS_BY_NAME: readonly CaptureOption[] = [
  ...(CAPTURE_OPTIONS as readonly CaptureOption[]),
].sort((a, b) => (a.name < b.name ? -1 : 1));

/**
 * The result-cache key: a hash (never a slug) of the owner and every option's part, so one
 * account's image is never served to another and different options are different entries.
 * Parts are named by option (a part that is undefined adds nothing); credentials enter only
 * as `digest`'s HMAC.
 */
export function cacheKeyFor(
  owner: string,
  options: KeyedOptions,
  digest: CredentialDigest,
): string {
  const parts: Record<string, unknown> = {};
  for (const o of OPTIONS_BY_NAME) parts[o.name] = o.cacheKey(options, digest);
  return sha256Hex(JSON.stringify([owner, parts]));
}

/** The digest of credentials in cache keys, keyed by a secret derived from the server's. */
export function credentialDigest(secrets: SecretDeriver): CredentialDigest {
  const key = secrets.derive('cache-key-credentials');
  return (value) => hmacSha256Hex(key, JSON.stringify(value));
}
