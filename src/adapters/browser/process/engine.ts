/**
 * Which Chromium runs, and how a capture presents itself (docs/engine.md). Pure: the browser
 * instance reads the product and user agent once at launch (Browser.getVersion) and keeps
 * what this module makes of them.
 *
 * - The engine: Chromium's headless shell (`chromium-headless-shell`, product
 *   `HeadlessChrome/<version>`) or the full browser in headless mode (product
 *   `Chrome/<version>`). The shell cancels HTTP authentication challenges by itself; the full
 *   browser waits on them until something answers (interception.ts).
 * - The presentation: both engines call themselves `HeadlessChrome` in the User-Agent, and
 *   the shell adds a `HeadlessChrome` brand to its client hints. Many sites answer that with
 *   a bot wall a person never sees, so a capture presents as the Chrome it is: the user agent
 *   of a Chrome of the same major version on the same platform (reduced, as Chrome sends it),
 *   the brands Chromium itself makes for that version, and the platform's client hints.
 */

export type Engine = 'shell' | 'full';

export interface BrandVersion {
  brand: string;
  version: string;
}

/** CDP's Emulation.UserAgentMetadata, the fields we set. */
export interface ClientHints {
  brands: BrandVersion[];
  fullVersionList: BrandVersion[];
  platform: string;
  platformVersion: string;
  architecture: string;
  model: string;
  mobile: boolean;
  bitness: string;
  wow64: boolean;
  formFactors: string[];
}

/** What a capture without a `user_agent` of its own sends and reports. */
export interface Presentation {
  engine: Engine;
  /** The engine's full version, `156.0.8078.129`. */
  version: string;
  /** The User-Agent header and navigator.userAgent. */
  userAgent: string;
  /** The Sec-CH-UA-* headers and navigator.userAgentData. */
  clientHints: ClientHints;
}

const PRODUCT = /^(Headless)?Chrome\/(\d+)(?:\.\d+){3}$/;

/** The engine behind Browser.getVersion's `product`; null for one we do not know. */
export function engineOf(product: string): Engine | null {
  const match = PRODUCT.exec(product);
  if (!match) return null;
  return match[1] ? 'shell' : 'full';
}

/** The first Chrome that sent Sec-CH-UA (and had navigator.userAgentData) by default. */
const FIRST_CLIENT_HINTS_VERSION = 90;

const GREASE_CHARS = [' ', '(', ':', '-', '.', '/', ')', ';', '=', '?', '_'];
const GREASE_VERSIONS = ['8', '99', '24'];

/**
 * The brands Chromium lists for a major version, its GREASE brand among them and where: the
 * algorithm of Chromium's components/embedder_support/user_agent_utils.cc (since 110), for a
 * build with no brand of its own (Chromium rather than Google Chrome). `fullVersion` null: the
 * major versions of Sec-CH-UA; else the full ones of Sec-CH-UA-Full-Version-List. Checked
 * against the engine's own list by test/browser/engine.test.ts.
 */
export function chromiumBrands(major: number, fullVersion: string | null): BrandVersion[] {
  const grease: BrandVersion = {
    brand: `Not${GREASE_CHARS[major % 11]}A${GREASE_CHARS[(major + 1) % 11]}Brand`,
    version: `${GREASE_VERSIONS[major % 3]}${fullVersion === null ? '' : '.0.0.0'}`,
  };
  const chromium: BrandVersion = { brand: 'Chromium', version: fullVersion ?? String(major) };
  return major % 2 === 0 ? [grease, chromium] : [chromium, grease];
}

interface PlatformFacts {
  platform: string;
  platformVersion: string;
  mobile: boolean;
  model: string;
  formFactors: string[];
}

/** The platform a user agent string names, as client hints say it; null if none we know. */
function platformOf(userAgent: string): PlatformFacts | null {
  const android = /\bAndroid(?: ([\d.]+))?(?:; ([^;)]+))?/.exec(userAgent);
  if (android) {
    const model = (android[2] ?? '').replace(/\s*Build\/.*$/, '').trim();
    const mobile = /\bMobile\b/.test(userAgent);
    return {
      platform: 'Android',
      platformVersion: android[1] ?? '',
      mobile,
      model: model === 'K' ? '' : model,
      formFactors: [mobile ? 'Mobile' : 'Tablet'],
    };
  }
  const desktop = (platform: string): PlatformFacts => ({
    platform,
    platformVersion: '',
    mobile: false,
    model: '',
    formFactors: ['Desktop'],
  });
  if (/\bCrOS\b/.test(userAgent)) return desktop('Chrome OS');
  if (/\bWindows NT\b/.test(userAgent)) return desktop('Windows');
  if (/\bMacintosh\b/.test(userAgent)) return desktop('macOS');
  if (/\bLinux\b/.test(userAgent)) return desktop('Linux');
  return null;
}

function architectureOf(
  userAgent: string,
  arch: string,
): { architecture: string; bitness: string } {
  if (/\b(?:aarch64|arm64|armv8)\b/i.test(userAgent)) return { architecture: 'arm', bitness: '64' };
  if (/\barm/i.test(userAgent)) return { architecture: 'arm', bitness: '32' };
  if (/\b(?:x86_64|Win64|x64|WOW64|Intel)\b/.test(userAgent)) {
    return { architecture: 'x86', bitness: '64' };
  }
  if (arch === 'arm64') return { architecture: 'arm', bitness: '64' };
  return { architecture: 'x86', bitness: arch === 'ia32' ? '32' : '64' };
}

/**
 * How an engine presents itself, from its Browser.getVersion answer: `HeadlessChrome/<v>`
 * becomes `Chrome/<major>.0.0.0` in the user agent, as Chrome's reduced user agent reads,
 * and the client hints are those of that Chrome on the platform the user agent names. Null
 * for a product we do not know (a build that names itself otherwise keeps its own).
 */
export function presentationOf(
  product: string,
  engineUserAgent: string,
  arch: string = process.arch,
): Presentation | null {
  const engine = engineOf(product);
  const version = product.slice(product.indexOf('/') + 1);
  if (engine === null) return null;
  const major = Number(version.split('.')[0]);
  const userAgent = engineUserAgent.replace(/\bHeadlessChrome\/[\d.]+/, `Chrome/${major}.0.0.0`);
  const clientHints = clientHintsOf(userAgent, arch, version);
  if (clientHints === null || /Headless/i.test(userAgent)) return null;
  return { engine, version, userAgent, clientHints };
}

/**
 * The client hints that go with a user agent string: those of the Chrome it names (its major
 * version, its platform, mobile or not), or null for a browser that sends none (Safari,
 * Firefox), in which case the capture sends no Sec-CH-UA headers and navigator.userAgentData
 * lists no brands, as those browsers do; so does a Chrome older than 90, which sent none.
 * `fullVersion` is the engine's own when the user agent is the engine's; for another Chrome
 * only its major version is known.
 */
export function clientHintsOf(
  userAgent: string,
  arch: string,
  fullVersion: string | null = null,
): ClientHints | null {
  // Chromium-based browsers with brands of their own (Edge, Opera, Samsung) are not Chrome.
  if (/\b(?:Edg|EdgA|OPR|SamsungBrowser|YaBrowser|HeadlessChrome)\//.test(userAgent)) return null;
  const chrome = /\bChrome\/(\d+)\.[\d.]+/.exec(userAgent);
  if (!chrome) return null;
  const major = Number(chrome[1]);
  // Chrome sends client hints since version 90; an older one named in a preset sent none.
  if (major < FIRST_CLIENT_HINTS_VERSION) return null;
  const platform = platformOf(userAgent);
  if (platform === null) return null;
  const full = fullVersion?.startsWith(`${major}.`) ? fullVersion : `${major}.0.0.0`;
  const { architecture, bitness } =
    platform.platform === 'Android'
      ? { architecture: '', bitness: '' }
      : architectureOf(userAgent, arch);
  return {
    brands: chromiumBrands(major, null),
    fullVersionList: chromiumBrands(major, full),
    platform: platform.platform,
    platformVersion: platform.platformVersion,
    architecture,
    model: platform.model,
    mobile: platform.mobile,
    bitness,
    wow64: false,
    formFactors: platform.formFactors,
  };
}

/**
 * The languages a capture without a `locale` asks for: those of a Chrome set up in US English
 * (Accept-Language `en-US,en;q=0.9`, navigator.languages `['en-US', 'en']`). The full browser
 * has them by default; the headless shell would send no Accept-Language header at all, which a
 * real browser never does.
 */
export const DEFAULT_ACCEPT_LANGUAGE = 'en-US,en';

/**
 * The user agent override for a capture: the caller's or the device preset's user agent with
 * the client hints that go with it, or the presentation's own. `locale` is the capture's
 * (null: DEFAULT_ACCEPT_LANGUAGE).
 */
export function userAgentOverride(options: {
  presentation: Presentation | null;
  userAgent: string | null;
  locale: string | null;
  /** process.arch by default. */
  arch?: string;
}): { userAgent: string; acceptLanguage: string; userAgentMetadata?: ClientHints } {
  const { presentation, userAgent, locale, arch = process.arch } = options;
  const acceptLanguage = locale ?? DEFAULT_ACCEPT_LANGUAGE;
  if (userAgent === null) {
    if (presentation === null) return { userAgent: '', acceptLanguage };
    return {
      userAgent: presentation.userAgent,
      acceptLanguage,
      userAgentMetadata: presentation.clientHints,
    };
  }
  const hints = clientHintsOf(userAgent, arch);
  return hints === null
    ? { userAgent, acceptLanguage }
    : { userAgent, acceptLanguage, userAgentMetadata: hints };
}
