/**
 * Where each capture option acts in the page. An option's schema, plan rule and cache-key
 * part are declared in its module (`src/domain/captures/options/`); its page step is here,
 * under the same name, because the domain must not know puppeteer. The `satisfies` below
 * makes typecheck fail until a new option has its entry, so the two halves cannot drift.
 *
 * A step is data the capture's fixed steps walk in their named phases (capture-page.ts,
 * `#capture`, over capture-steps.ts): selectors checked before loading, emulation before
 * loading, waits after loading in this table's order. Options that shape the capture itself
 * (the viewport, the navigation, the framing, the encoding) are read by those fixed steps,
 * and say so in `readBy`.
 */
import { type MediaFeature, ProtocolError } from 'puppeteer-core';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { CaptureOptionName } from '../../../../domain/captures/capture-options.ts';
import type { RenderOptions, RenderPhase } from '../../../../domain/captures/renderer.ts';
import { AppError, isAppError } from '../../../../domain/errors.ts';
import { sleep, withTimeout } from '../../../../lib/abort.ts';
import { type Presentation, userAgentOverride } from '../../process/engine.ts';
import type { StepPage } from '../capture-run.ts';
import {
  addStyle,
  blockWebSockets,
  clickElement,
  domTokens,
  keepEval,
  runScript,
  scrollToElement,
  selectorPresent,
} from '../in-page/page-scripts.ts';
import {
  inIsolatedWorld,
  isolatedWorld,
  pageBoolean,
  pageText,
  pageTokens,
} from '../in-page/page-values.ts';
import { socketBlockPatterns } from '../network/request-rules.ts';
import {
  CONSENT_BUDGET_MS,
  CONSENT_FINISHED,
  CONSENT_GRACE_MS,
  CONSENT_NONE_MS,
  consentScript,
  consentSettled,
} from './consent.ts';
import type { EmulationSender } from './emulation-state.ts';

/** Class names, ids and link targets read from a page for the ad list's hiding rules, each. */
const MAX_DOM_TOKENS = 5_000;
/** A class name, id or link target longer than this is not read (no hiding rule names one). */
const MAX_DOM_TOKEN_LENGTH = 2_048;

/**
 * The capture's fixed steps (capture-steps.ts, interception.ts, page-content.ts, framing.ts,
 * pdf.ts), by name.
 */
type FixedStep =
  | 'viewport'
  | 'requests'
  | 'load'
  | 'metadata'
  | 'content'
  | 'prepareCapture'
  | 'frame'
  | 'screenshot'
  | 'pdf';

export interface OptionStep {
  /** CSS selectors it will use: all are checked before the page loads (400, first bad one). */
  selectors?(o: RenderOptions): readonly (string | null)[];
  /** Media features it emulates; every option's features are set in one call. */
  mediaFeatures?(o: RenderOptions): MediaFeature[];
  /** The CSS media type it emulates, set in the same call ('' is the default, screen). */
  mediaType?(o: RenderOptions): string;
  /**
   * Other emulation, set before the page loads, together with the viewport; `presentation` is
   * how the browser's captures present themselves by default (process/engine.ts).
   */
  emulate?(
    cdp: EmulationSender,
    o: RenderOptions,
    presentation: Presentation | null,
  ): Promise<unknown>;
  /**
   * A script run in every document of this capture (frames included) before the page's own
   * scripts; null: none. Removed again before the next capture.
   */
  documentScript?(o: RenderOptions): string | null;
  /**
   * A wait once the page has loaded, run in table order; `phase` (null: nothing to wait for)
   * is what a timeout reports the capture was doing, in words, and `kind` the phase it names.
   */
  afterLoad?: {
    kind: RenderPhase;
    phase(o: RenderOptions): string | null;
    run(p: StepPage, o: RenderOptions): Promise<void>;
  };
  /** The fixed steps that read it. */
  readBy?: readonly FixedStep[];
}

/** domcontentloaded asks for the earliest capture: no settling for network, fonts, images. */
export const settles = (o: RenderOptions): boolean => o.waitUntil !== 'domcontentloaded';

export const OPTION_STEPS = {
  url: { readBy: ['load'] },
  format: { readBy: ['screenshot'] },
  width: { readBy: ['viewport', 'frame'] },
  height: { readBy: ['viewport', 'frame'] },
  full_page: { readBy: ['frame'] },
  quality: { readBy: ['screenshot'] },
  fresh: {}, // the cache's business: the page never sees it
  device_scale_factor: { readBy: ['viewport', 'frame'] },
  // After-load waits run in this order: the selector, the network, then the fixed delay.
  wait_for_selector: {
    selectors: (o) => [o.waitForSelector],
    afterLoad: {
      kind: 'selector',
      phase: (o) =>
        o.waitForSelector === null
          ? null
          : `waiting for selector "${o.waitForSelector.slice(0, 200)}"`,
      run: async ({ page, signal, step }, o) => {
        if (o.waitForSelector === null) return;
        const wait = { polling: 'mutation', timeout: 0, signal } as const;
        const found = await step(
          isolatedWorld(page).waitForFunction(selectorPresent, wait, o.waitForSelector),
        );
        await found.dispose();
      },
    },
  },
  wait_until: {
    readBy: ['load', 'frame'],
    afterLoad: {
      kind: 'network',
      phase: (o) => (settles(o) ? 'waiting for the network to settle' : null),
      // The rest of the window is waited while the image is taken (capture-page.ts).
      run: (p) => p.networkQuietEarly(),
    },
  },
  delay: {
    afterLoad: {
      kind: 'delay',
      phase: (o) => (o.delay > 0 ? `waiting ${o.delay} ms (delay)` : null),
      run: (p, o) => sleep(o.delay, p.signal),
    },
  },
  selector: { selectors: (o) => [o.selector], readBy: ['frame'] },
  dark_mode: {
    mediaFeatures: (o) => [{ name: 'prefers-color-scheme', value: o.darkMode ? 'dark' : 'light' }],
  },
  reduced_motion: {
    mediaFeatures: (o) => [
      { name: 'prefers-reduced-motion', value: o.reducedMotion ? 'reduce' : 'no-preference' },
    ],
  },
  hide_selectors: { selectors: (o) => o.hideSelectors, readBy: ['prepareCapture'] },
  omit_background: {
    emulate: (cdp, o) =>
      cdp.send(
        'Emulation.setDefaultBackgroundColorOverride',
        o.omitBackground && o.format !== 'jpeg' ? { color: { r: 0, g: 0, b: 0, a: 0 } } : {},
      ),
  },
  // Every capture sets these anew, and the request headers they shape (User-Agent, the
  // Sec-CH-UA client hints, Accept-Language) go out with the page's every request, workers'
  // included: the same for each origin, like a browser's own. Without a user_agent the
  // capture presents as the Chrome the engine is, never as HeadlessChrome (engine.ts).
  user_agent: {
    emulate: (cdp, o, presentation) =>
      cdp.send(
        'Emulation.setUserAgentOverride',
        userAgentOverride({ presentation, userAgent: o.userAgent, locale: o.locale }),
      ),
  },
  locale: {
    // navigator.language and Accept-Language come with user_agent's call above; this is the
    // page's Intl default (dates, numbers).
    emulate: (cdp, o) =>
      cdp.send('Emulation.setLocaleOverride', o.locale ? { locale: o.locale } : {}),
  },
  timezone: {
    emulate: (cdp, o) =>
      cdp.send('Emulation.setTimezoneOverride', { timezoneId: o.timezone ?? 'UTC' }),
  },
  media_type: { mediaType: (o) => (o.mediaType === 'print' ? 'print' : '') },
  // The page actions, after the waits above, in this order: styles, scripts, click, scroll.
  styles: {
    // Injected styles and scripts are the caller's, not the page's: its CSP does not apply to
    // them. Set for every capture, so a page without them has its CSP back.
    emulate: (cdp, o) =>
      cdp.send('Page.setBypassCSP', {
        enabled: o.styles !== null || o.scripts !== null || o.blockAds || o.blockCookieBanners,
      }),
    afterLoad: {
      kind: 'actions',
      phase: (o) => (o.styles === null ? null : 'adding styles'),
      run: async ({ page, step }, o) => {
        if (o.styles === null) return;
        await step(inIsolatedWorld(page, addStyle, o.styles));
      },
    },
  },
  scripts: {
    documentScript: (o) => (o.scripts === null ? null : `(${keepEval.toString()})();`),
    afterLoad: {
      kind: 'actions',
      phase: (o) => (o.scripts === null ? null : 'running scripts'),
      run: async (p, o) => {
        if (o.scripts === null) return;
        let thrown: string | null;
        try {
          // In the page's own world, as a classic script; a promise it ends with is awaited,
          // and its value never comes back (runScript answers null or what it threw).
          const max = BOUNDS.capture.scriptErrorMaxChars;
          const answer = await p.step(p.page.evaluate(runScript, o.scripts, max));
          thrown = pageText(answer, max, 'answer of scripts');
        } catch (err) {
          // The script navigated the page (location.href = ...): its document is gone, the
          // next one loads below. Anything else (the deadline, an abort, a lost page) is not
          // the script's error: what the script threw came back as the answer.
          if (isAppError(err) || !(err instanceof Error) || !NAVIGATED.test(err.message)) throw err;
          thrown = null;
        }
        if (thrown !== null) {
          throw new AppError('invalid_request', `scripts threw an error: ${thrown}`);
        }
        // What the script started (requests, images) settles before the capture.
        await p.networkQuiet();
      },
    },
  },
  click: {
    selectors: (o) => [o.click],
    afterLoad: {
      kind: 'actions',
      phase: (o) => (o.click === null ? null : `clicking "${o.click.slice(0, 200)}"`),
      run: async (p, o) => {
        if (o.click === null) return;
        const found = pageBoolean(
          await p.step(inIsolatedWorld(p.page, clickElement, o.click)),
          'click answer',
        );
        if (!found) {
          throw new AppError(
            'invalid_request',
            `click selector "${o.click.slice(0, 200)}" matched no element`,
          );
        }
        // What the click started (a request, a new view) settles before the capture.
        await p.networkQuiet();
      },
    },
  },
  scroll_into_view: {
    selectors: (o) => [o.scrollIntoView],
    afterLoad: {
      kind: 'actions',
      phase: (o) =>
        o.scrollIntoView === null ? null : `scrolling to "${o.scrollIntoView.slice(0, 200)}"`,
      run: async ({ page, step }, o) => {
        if (o.scrollIntoView === null) return;
        const found = pageBoolean(
          await step(inIsolatedWorld(page, scrollToElement, o.scrollIntoView)),
          'scroll answer',
        );
        if (!found) {
          throw new AppError(
            'invalid_request',
            `scroll_into_view selector "${o.scrollIntoView.slice(0, 200)}" matched no element`,
          );
        }
      },
    },
  },
  fail_on_http_error: { readBy: ['load'] },
  fail_on: {}, // capture-page.ts checks the warnings against it, once they are all known
  cache_ttl: {}, // the cache's business: the page never sees it
  clip: { readBy: ['frame'] },
  // The request filter (request-rules.ts) reads these: requests blocked, headers and
  // credentials added to the target's own.
  block_requests: {
    readBy: ['requests'],
    // Sockets blocked by either option (socketBlockPatterns reads both).
    documentScript: (o) => {
      const patterns = socketBlockPatterns(o);
      return patterns.length === 0
        ? null
        : `(${blockWebSockets.toString()})(${JSON.stringify(patterns)});`;
    },
  },
  block_resources: { readBy: ['requests'] },
  headers: { readBy: ['requests'] },
  cookies: { emulate: (cdp, o) => setCookies(cdp, o) },
  http_auth: { readBy: ['requests'] },
  block_ads: {
    readBy: ['requests'],
    // The ad boxes EasyList's element rules name for this page, hidden (their requests were
    // blocked, but a box can hold its size, or content of the page's own).
    afterLoad: {
      kind: 'actions',
      phase: (o) => (o.blockAds ? 'hiding ads' : null),
      run: async ({ page, step, lists }, o) => {
        if (!o.blockAds || lists === null) return;
        const list = await step(lists.get('ads'));
        const dom = pageTokens(
          await step(
            inIsolatedWorld(page, domTokens, {
              limit: MAX_DOM_TOKENS,
              maxToken: MAX_DOM_TOKEN_LENGTH,
              maxChars: BOUNDS.capture.pageValueMaxChars,
            }),
          ),
        );
        const css = list.hidingStyles(page.url(), dom);
        if (css !== '') await step(inIsolatedWorld(page, addStyle, css));
      },
    },
  },
  block_trackers: { readBy: ['requests'] },
  block_cookie_banners: {
    documentScript: (o) => (o.blockCookieBanners ? consentScript() : null),
    afterLoad: {
      kind: 'actions',
      phase: (o) => (o.blockCookieBanners ? 'dismissing cookie banners' : null),
      run: async (p, o) => {
        if (!o.blockCookieBanners) return;
        // In the page's own world, where autoconsent's state is; it answers nothing, and a
        // page that broke its timers is waited for no longer than the budget and a grace.
        const settled = p.page.evaluate(consentSettled, {
          budgetMs: CONSENT_BUDGET_MS,
          noneMs: CONSENT_NONE_MS,
          finished: [...CONSENT_FINISHED],
        });
        await p.step(withTimeout(settled, CONSENT_BUDGET_MS + CONSENT_GRACE_MS, undefined));
        // What refusing started (a request, the banner's own exit) settles first.
        await p.networkQuiet();
      },
    },
  },
  device: {}, // resolved into width, height, scale, user agent, mobile and touch
  mobile: { readBy: ['viewport'] },
  // Set for every capture (off included), so touch never carries over to the next one.
  has_touch: {
    emulate: (cdp, o) =>
      cdp.send(
        'Emulation.setTouchEmulationEnabled',
        o.hasTouch ? { enabled: true, maxTouchPoints: 5 } : { enabled: false },
      ),
  },
  landscape: {}, // resolved into width and height
  metadata: { readBy: ['metadata'] },
  pdf_paper: { readBy: ['pdf'] },
  pdf_landscape: { readBy: ['pdf'] },
  pdf_print_background: { readBy: ['pdf'] },
  pdf_single_page: { readBy: ['pdf'] },
  response_type: {}, // how the route answers: the page never sees it
  async: {}, // when the capture runs: the page never sees it
  webhook_url: {}, // where the result goes afterwards
  // The delivered image's size: the frame is drawn at its scale (framing.ts, image-resize.ts).
  image_width: { readBy: ['frame', 'screenshot'] },
  image_height: { readBy: ['frame', 'screenshot'] },
  image_fit: { readBy: ['frame', 'screenshot'] },
  // The document is the main frame's answer (interception.ts) at the url (`load`).
  html: { readBy: ['requests', 'load'] },
  markdown: {}, // rendered into html
  base_url: {}, // resolved into url
  content: { readBy: ['content'] },
  // Which context the capture runs in, and where its traffic goes (page-pool.ts, lanes).
  proxy: {},
  proxy_country: {},
  storage: {}, // where a copy of the result goes afterwards
  // The position; the permission is the context's (capture-page.ts, geolocation).
  geolocation: {
    emulate: (cdp, o) =>
      cdp.send(
        'Emulation.setGeolocationOverride',
        o.geolocation === null ? {} : { ...o.geolocation },
      ),
  },
} satisfies Record<CaptureOptionName, OptionStep>;

/**
 * The capture's cookies, in the context's jar before the page loads (the jar is emptied
 * after every capture). One command each, so a refusal names its cookie.
 */
async function setCookies(cdp: EmulationSender, o: RenderOptions): Promise<void> {
  await Promise.all(
    o.cookies.map(async (c, i) => {
      try {
        await cdp.send('Network.setCookie', {
          name: c.name,
          value: c.value,
          url: o.url,
          ...(c.domain === null ? {} : { domain: `.${c.domain}` }),
          path: c.path,
          secure: c.secure,
          httpOnly: c.httpOnly,
          ...(c.sameSite === null ? {} : { sameSite: c.sameSite }),
        });
      } catch (err) {
        if (!(err instanceof ProtocolError)) throw err;
        throw new AppError(
          'invalid_request',
          `cookies[${i}] was refused by the browser (${err.message.slice(0, 200)})`,
        );
      }
    }),
  );
}

/** What puppeteer says when the document a script ran in was replaced by a navigation. */
/** What puppeteer says when the document a step ran in was replaced under it. */
export const NAVIGATED = /Execution context was destroyed|Cannot find context with specified id/;

/** The table as a list, in its order. */
export const optionSteps: readonly OptionStep[] = Object.values(OPTION_STEPS);
