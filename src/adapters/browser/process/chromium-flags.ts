/**
 * What Chromium is started with: its command line (puppeteer's defaults with our flags) and its
 * environment (an allowlist). Pure: browser-instance.ts spawns it; the benchmark's baseline
 * browser starts with the same flags.
 */
import { join } from 'node:path';
import { defaultArgs } from 'puppeteer-core';
import { DEFAULT_ACCEPT_LANGUAGE } from './engine.ts';

const DISABLED_FEATURES = [
  'Translate',
  'MediaRouter',
  'DialMediaRouteProvider',
  'OptimizationHints',
  'AcceptCHFrame',
  // A page we navigate away from must not stay alive (and reachable through history) in
  // the back/forward cache.
  'BackForwardCache',
  // HTTPS-Upgrades would first try https:// for an http:// target: a different request than
  // the one asked for.
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'InterestFeedContentSuggestions',
  'CertificateTransparencyComponentUpdater',
  'AutofillServerCommunication',
  'PrivacySandboxSettings4',
  'MediaEngagementBypassAutoplayPolicies',
  'ProcessPerSiteUpToMainFrameThreshold',
  'IsolateSandboxedIframes',
  'Prerender2',
  // Chromium 156 preloads its WebUI omnibox popups for every window, and each context's page is
  // a window of its own: two renderer processes (~15 MiB each) per page, never shown headless.
  // Browser UI only; the pages' own processes and site isolation are untouched.
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  // Chromium keeps a spare renderer process started for the browser context used last; with
  // captures of several clients (a context each) taking turns, the spare is nearly always for
  // the wrong context, killed, and started again: 169 renderer processes for 100 captures of
  // four clients at concurrency 4, against 11 without it, and 2.80 -> 3.88 captures/s. One
  // client's captures, cross-site or not, were as fast without it (391 -> 388 ms per capture).
  'SpareRendererForSitePerProcess',
  // Network time: `GET clients2.google.com/time/1/current` seconds after launch, which
  // --disable-background-networking leaves on in Chromium 156. Chromium's clock checks (a
  // certificate error blamed on a wrong clock) use the system clock alone.
  'NetworkTimeServiceQuerying',
];

/**
 * Port 9 of loopback, for the background services that no switch or feature turns off: it is
 * on Chromium's list of restricted ports, so a request for it fails inside Chromium
 * (ERR_UNSAFE_PORT) before any proxy, name lookup or socket.
 */
const NOWHERE = '127.0.0.1:9';

export interface ChromiumArgsOptions {
  proxyUrl?: string;
  /** Whether we run as root, where Chromium's setuid/user-namespace sandbox cannot start. */
  root: boolean;
}

/** Command-line flags beyond puppeteer's defaults (which add --headless, --disable-extensions...). */
export function chromiumArgs(options: ChromiumArgsOptions): string[] {
  const args = [
    '--disable-background-networking',
    '--disable-sync',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    // Google sign-in's origin. Chromium 156 asks it which Google accounts the cookie jar holds
    // (`POST accounts.google.com/ListAccounts`) at launch and again and again (seen at 4, 5, 8,
    // 16, 40 and 114 s), with --disable-sync and --allow-browser-signin=false alike. Pages are
    // unaffected: accounts.google.com loads as any other site. (Chromium logs that it ignores
    // the port when it isolates this origin; harmless.)
    `--gaia-url=https://${NOWHERE}`,
    // The component updater's server (update checks and pings). --disable-component-update
    // registers no component at launch, but the optimization guide still registers its
    // on-device models manifest (ceofaddefefcbblgcgnibnonglccbfja) and asks for it on demand:
    // `POST update.googleapis.com/service/update2/json` at launch and again a minute later.
    // Any component registered at run time would do the same; now every check fails at once.
    `--component-updater=url-source=http://${NOWHERE}/`,
    // Debian's build still starts two chrome_crashpad_handler processes, outside our process
    // group (--disable-crashpad-for-testing would stop them but breaks every navigation with
    // ERR_ABORTED on Chromium 156). Their database lives under our HOME, so close() finds
    // and kills them by our directory in their command line.
    '--disable-breakpad',
    // The headless shell has no popup blocker: without this, window.open and target=_blank
    // open windows (each loading its page) until the targetcreated closer gets to them. With
    // it every new window fails at once (test/browser/render-failures.test.ts, 50 popups).
    // The full browser ignores it; its own popup blocker refuses popups without a user
    // gesture (see chromiumCommandLine).
    '--block-new-web-contents',
    // Every site in a renderer process of its own, a cross-site frame included: the full
    // browser does it by default, the headless shell does not (a cross-site iframe shared its
    // page's process there; test/browser/engine.test.ts). A page is hostile code, and this is
    // the boundary between the sites of one capture.
    '--site-per-process',
    '--no-first-run',
    '--no-default-browser-check',
    '--no-pings',
    '--disable-quic',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--disable-features=${DISABLED_FEATURES.join(',')}`,
    '--deny-permission-prompts',
    '--mute-audio',
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--disable-gpu',
    '--autoplay-policy=user-gesture-required',
    // The headless shell's languages when nothing overrides them (a worker's navigator.languages,
    // which the page's user agent override does not reach): a Chrome set up in US English,
    // what the full browser has by default (engine.ts DEFAULT_ACCEPT_LANGUAGE), so on it the
    // switch changes nothing.
    `--accept-lang=${DEFAULT_ACCEPT_LANGUAGE}`,
  ];
  if (options.root) {
    // Running as root (as in this container): Chromium refuses to start its sandbox. The page
    // is still confined by site isolation and by the egress proxy, which is the boundary we
    // rely on for network reach.
    args.push('--no-sandbox');
  }
  if (options.proxyUrl) {
    // <-loopback> removes Chromium's implicit bypass of localhost, so every connection,
    // loopback included, goes through the egress proxy.
    // Chromium then never needs a name of its own (the proxy resolves every target), so its
    // resolver answers nothing: no DNS prefetch or preconnect lookups a page could use to
    // leak data past the proxy. The proxy itself is an IP literal, excluded from the rule.
    const proxyHost = new URL(options.proxyUrl).hostname;
    args.push(
      `--proxy-server=${options.proxyUrl}`,
      '--proxy-bypass-list=<-loopback>',
      `--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE ${proxyHost}`,
    );
  }
  return args;
}

/**
 * Chromium's command line: what puppeteer's launch() gives for `headless: 'shell', pipe: true`
 * (a plain `--headless`: the headless shell's only mode, and the full browser's new headless
 * mode since Chromium 132, so one command line serves both engines, docs/engine.md)
 * with our profile and flags (its defaults, with our --disable-features merged into its own),
 * less --disable-popup-blocking: Chromium's own popup blocker stays on, so a page without a
 * user gesture (and ours never get one) cannot open windows at all; the targetcreated closer
 * is the second line.
 */
export function chromiumCommandLine(profile: string, options: ChromiumArgsOptions): string[] {
  const args = defaultArgs({
    headless: 'shell',
    userDataDir: profile,
    args: chromiumArgs(options),
  });
  return [...args.filter((arg) => arg !== '--disable-popup-blocking'), '--remote-debugging-pipe'];
}

/** Variables passed on to Chromium by name... */
const ENV_NAMES = new Set(['PATH', 'LANG', 'LANGUAGE', 'TZ']);
/** ...and by prefix: XDG directories, fontconfig settings, locale categories. */
const ENV_PREFIXES = ['XDG_', 'FONTCONFIG_', 'LC_'];

/**
 * Chromium's environment, an allowlist (docs/security.md, "Chromium's environment"): what it
 * needs to find programs, fonts, the locale and the time zone, and its own HOME and TMPDIR.
 * Nothing else of the service's environment (SERVER_SECRET, database, Redis, S3 and payment
 * credentials) is ever in a browser process, where a compromised renderer could read it.
 */
export function chromiumEnv(tmp: string, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined) continue;
    if (ENV_NAMES.has(name) || ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      env[name] = value;
    }
  }
  return {
    ...env,
    HOME: tmp,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(tmp, '.config'),
    XDG_CACHE_HOME: join(tmp, '.cache'),
  };
}
