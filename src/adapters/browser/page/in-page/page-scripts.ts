/**
 * Functions that run inside the rendered page (puppeteer serialises them). Each one is
 * self-contained: no imports, no outer variables. Every wait is bounded inside the page too, so a
 * page that never settles still answers.
 *
 * Where each runs (docs/security.md, "Hostile pages"): the helpers whose result the
 * service reads run in the isolated world (page-values.ts, `inIsolatedWorld`), where the page's
 * replaced built-ins do not reach, and bound what they return, since the DOM they read is still
 * the page's. Only the document scripts, `runScript` and `consentSettled` run in the page's own
 * world, and they return nothing the page could shape.
 */

/**
 * Runs in every document of our pages before the page's own scripts: service worker
 * registration is refused the way browsers with service workers disabled refuse it. This is the
 * first line; the page also bypasses service workers for its requests, and every registration
 * is wiped with the origin's storage after each capture.
 */
export function blockServiceWorkers(): void {
  const container = globalThis.ServiceWorkerContainer;
  if (!container) return;
  const refuse = (): Promise<never> =>
    Promise.reject(new DOMException('Service workers are disabled', 'SecurityError'));
  Object.defineProperty(container.prototype, 'register', {
    value: refuse,
    writable: false,
    configurable: false,
  });
}

/**
 * Refuses WebSockets to URLs matching `patterns` (`*` globs over the whole URL, as
 * `block_requests`; `['*']` for `block_resources: ["websocket"]`): Chromium's request
 * interception and blocklist never see a WebSocket handshake, so the constructor is guarded
 * in every document instead, throwing the SecurityError of a refused connection. Self-
 * contained: it runs in the page, before the page's own scripts.
 */
export function blockWebSockets(patterns: string[]): void {
  const Native = globalThis.WebSocket;
  if (!Native) return;
  const matches = (pattern: string, input: string): boolean => {
    const parts = pattern.toLowerCase().split('*');
    const text = input.toLowerCase();
    const first = parts[0] ?? '';
    if (parts.length === 1) return text === first;
    const last = parts[parts.length - 1] ?? '';
    if (!text.startsWith(first) || text.length < first.length + last.length) return false;
    let at = first.length;
    const end = text.length - last.length;
    for (const part of parts.slice(1, -1)) {
      if (part === '') continue;
      const found = text.indexOf(part, at);
      if (found === -1 || found + part.length > end) return false;
      at = found + part.length;
    }
    return text.endsWith(last);
  };
  const Guarded = new Proxy(Native, {
    construct(target, args, newTarget) {
      const url = new URL(String(args[0]), location.href).href;
      if (patterns.some((p) => matches(p, url))) {
        throw new DOMException(`WebSocket to ${url} blocked by the capture`, 'SecurityError');
      }
      return Reflect.construct(target, args, newTarget);
    },
  });
  Object.defineProperty(globalThis, 'WebSocket', {
    value: Guarded,
    writable: false,
    configurable: false,
  });
}

/**
 * The class names, ids and link targets of the document (each list at most `limit` long, each
 * token at most `maxToken` characters, all of them together at most `maxChars`): what a filter
 * list's element-hiding rules are looked up by.
 */
export function domTokens(args: { limit: number; maxToken: number; maxChars: number }): {
  classes: string[];
  ids: string[];
  hrefs: string[];
} {
  const classes = new Set<string>();
  const ids = new Set<string>();
  const hrefs = new Set<string>();
  let chars = 0;
  const add = (set: Set<string>, token: string): void => {
    if (set.size >= args.limit || token.length > args.maxToken || set.has(token)) return;
    if (chars + token.length > args.maxChars) return;
    chars += token.length;
    set.add(token);
  };
  const elements = document.querySelectorAll('[class], [id], a[href]');
  for (let i = 0; i < elements.length; i++) {
    const el = elements[i] as Element;
    for (const name of el.classList) add(classes, name);
    if (el.id) add(ids, el.id);
    const href = el.getAttribute('href');
    if (href && el.tagName === 'A') add(hrefs, href);
    if (classes.size >= args.limit && ids.size >= args.limit && hrefs.size >= args.limit) break;
    if (chars >= args.maxChars) break;
  }
  return { classes: [...classes], ids: [...ids], hrefs: [...hrefs] };
}

/**
 * What the page says about itself (`metadata`): title, descriptions, Open Graph image and
 * icon, as the document has them now. Texts are cut at `maxText` characters (whitespace
 * collapsed within the first `maxRaw`, so a text of 100 MB costs no more than a short one);
 * URLs are made absolute, and kept only when http(s) and at most `maxUrl` characters (a data:
 * icon is not a URL a client can use). What it returns is the page's, treated as data.
 */
export function readMetadata(limits: { maxText: number; maxUrl: number; maxRaw: number }): {
  title: string | null;
  description: string | null;
  og: { title: string | null; description: string | null; image: string | null };
  icon_url: string | null;
} {
  const text = (value: string | null | undefined): string | null => {
    const t = (value ?? '').slice(0, limits.maxRaw).replace(/\s+/g, ' ').trim();
    return t === '' ? null : t.slice(0, limits.maxText);
  };
  const url = (value: string | null | undefined): string | null => {
    if (!value || value.length > limits.maxRaw) return null;
    try {
      const u = new URL(value, document.baseURI);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
      return u.href.length <= limits.maxUrl ? u.href : null;
    } catch {
      return null;
    }
  };
  const meta = (selector: string): string | null =>
    document.head?.querySelector(selector)?.getAttribute('content') ?? null;
  const icon =
    document.head?.querySelector('link[rel~="icon" i]') ??
    document.head?.querySelector('link[rel="apple-touch-icon" i]');
  return {
    title: text(document.title),
    description: text(meta('meta[name="description" i]')),
    og: {
      title: text(meta('meta[property="og:title" i]')),
      description: text(meta('meta[property="og:description" i]')),
      image: url(meta('meta[property="og:image" i]')),
    },
    icon_url: url(icon?.getAttribute('href') ?? null),
  };
}

/**
 * Null when every selector parses; else the first one that does not. Runs on the blank page
 * before navigation, so a bad selector costs no network.
 */
export function firstInvalidSelector(selectors: string[]): string | null {
  for (const selector of selectors) {
    try {
      document.createDocumentFragment().querySelector(selector);
    } catch {
      return selector;
    }
  }
  return null;
}

/** What the page looks like just before its capture: what its warnings are made of. */
export interface CaptureState {
  /** Web fonts still loading, and those that failed (FontFace status), of at most 1,000. */
  fontsLoading: number;
  fontsFailed: number;
  /**
   * With `consent`: the share of the viewport (0 to 1) a visible consent layer still covers,
   * 0 when none does.
   */
  banner: number;
}

/**
 * Web fonts still loading (at most `max` faces looked at): asked again after the image when
 * some were loading before it, since the image may have waited for them.
 */
export function fontsLoading(max: number): number {
  let loading = 0;
  let seen = 0;
  try {
    for (const face of document.fonts) {
      if (++seen > max) break;
      if (face.status === 'loading') loading++;
    }
  } catch {
    // A document without fonts to list: nothing loading.
  }
  return loading;
}

/**
 * Deterministic frames: CSS animations and transitions jump to their end state (infinite ones
 * back to their start), Web Animations likewise, the caret is hidden, smooth scrolling is off.
 * `hide` selectors get visibility:hidden (each rule on its own, already validated). Answers
 * the page's CaptureState: its fonts, and with `consent` what a consent layer still covers,
 * found from fifteen points of the viewport (a fixed or sticky layer over them whose text speaks
 * of cookies or consent), so that a page of any size costs the same.
 */
export function freezeAndHide(args: { hide: string[]; consent: boolean }): CaptureState {
  const { hide } = args;
  const style = document.createElement('style');
  let css =
    '*,*::before,*::after{animation-delay:0s!important;animation-duration:0s!important;' +
    'animation-iteration-count:1!important;transition-delay:0s!important;' +
    'transition-duration:0s!important;caret-color:transparent!important;' +
    'scroll-behavior:auto!important}';
  for (const selector of hide) css += `\n${selector}{visibility:hidden!important}`;
  style.textContent = css;
  (document.head ?? document.documentElement)?.append(style);
  for (const animation of document.getAnimations()) {
    try {
      const end = animation.effect?.getComputedTiming().endTime;
      if (end === Number.POSITIVE_INFINITY) animation.cancel();
      else animation.finish();
    } catch {
      try {
        animation.cancel();
      } catch {
        // An animation that can be neither finished nor cancelled is left as it is.
      }
    }
  }
  // The fonts counted here, not by calling fontsLoading: a helper runs in the page serialised
  // on its own, without the module's other functions.
  let fontsLoading = 0;
  let fontsFailed = 0;
  let seen = 0;
  try {
    for (const face of document.fonts) {
      if (++seen > 1000) break;
      if (face.status === 'loading') fontsLoading++;
      else if (face.status === 'error') fontsFailed++;
    }
  } catch {
    // A document without fonts to list: nothing loading.
  }
  let banner = 0;
  if (args.consent) {
    const words = /cookie|consent|gdpr|privacy|datenschutz|tracking|accept all|reject all/i;
    const vw = window.innerWidth;
    const vh = window.innerHeight;
    const checked = new Set<Element>();
    for (const fx of [0.2, 0.5, 0.8]) {
      // The top and bottom rows too: consent bars are often a strip along either edge.
      for (const fy of [0.03, 0.2, 0.5, 0.8, 0.97]) {
        let el: Element | null = document.elementFromPoint(vw * fx, vh * fy);
        while (el && el !== document.body && el !== document.documentElement) {
          if (checked.has(el)) break;
          checked.add(el);
          const style = getComputedStyle(el);
          if (
            (style.position === 'fixed' || style.position === 'sticky') &&
            style.visibility !== 'hidden' &&
            Number(style.opacity) > 0.1
          ) {
            const text = (el.textContent ?? '').slice(0, 4000);
            if (words.test(text)) {
              const rect = el.getBoundingClientRect();
              const w = Math.max(0, Math.min(rect.right, vw) - Math.max(rect.left, 0));
              const h = Math.max(0, Math.min(rect.bottom, vh) - Math.max(rect.top, 0));
              banner = Math.max(banner, (w * h) / (vw * vh || 1));
            }
            break;
          }
          el = el.parentElement;
        }
      }
    }
  }
  return { fontsLoading, fontsFailed, banner };
}

/**
 * The layout viewport's width in CSS px: 980 on a phone for a page without a
 * `<meta name="viewport">`, which the phone zooms out to its screen (framing.ts).
 */
export function layoutWidth(): number {
  return document.documentElement?.clientWidth ?? window.innerWidth;
}

export interface ElementBox {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * The document-coordinates box of the first element matching `selector`, after scrolling it
 * into view (so lazy content inside it loads); null when nothing matches.
 */
export function elementBox(selector: string): ElementBox | null {
  const el = document.querySelector(selector);
  if (!el) return null;
  el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
  const rect = el.getBoundingClientRect();
  return {
    x: rect.left + window.scrollX,
    y: rect.top + window.scrollY,
    width: rect.width,
    height: rect.height,
  };
}

/** The document's full height in CSS px (`pdf_single_page`). */
export function documentHeight(): number {
  return Math.ceil(
    Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0),
  );
}

/** Whether `selector` matches something now (plain CSS, as document.querySelector). */
export function selectorPresent(selector: string): boolean {
  return document.querySelector(selector) !== null;
}

/**
 * `click`: a click event on the first element matching `selector`, as the DOM's click()
 * sends it (no scrolling, no pointer position). False when nothing matches.
 */
export function clickElement(selector: string): boolean {
  const element = document.querySelector(selector);
  if (element === null) return false;
  element.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, view: window }));
  return true;
}

/** `scroll_into_view`: the element's top at the viewport's top. False when nothing matches. */
export function scrollToElement(selector: string): boolean {
  const element = document.querySelector(selector);
  if (element === null) return false;
  element.scrollIntoView({ block: 'start', inline: 'nearest', behavior: 'instant' });
  return true;
}

/**
 * `clip`: the region's middle brought to the middle of the viewport, as elementBox does for an
 * element, so lazy content in it loads.
 */
export function scrollToBox(box: { x: number; y: number; width: number; height: number }): void {
  window.scrollTo({
    left: Math.max(0, box.x + box.width / 2 - window.innerWidth / 2),
    top: Math.max(0, box.y + box.height / 2 - window.innerHeight / 2),
    behavior: 'instant',
  });
}

/**
 * `styles` and the ad list's hiding rules: a style element at the end of the document's head
 * (the caller's CSS; the capture bypasses the page's CSP while it injects any).
 */
export function addStyle(css: string): void {
  const style = document.createElement('style');
  style.textContent = css;
  (document.head ?? document.documentElement)?.append(style);
}

/**
 * `scripts`, in the page's own world (it is there to change the page): the source runs as a
 * classic script through the eval the document script `keepEval` kept before the page's own
 * scripts ran (a page that replaced `eval` does not see the source), and a promise it ends with
 * is awaited. Its value is never returned: the answer is null, or the first line of what it
 * threw, at most `maxError` characters, copied with operators alone (nothing of the page's own
 * built-ins, which it may have replaced, shapes it).
 */
export async function runScript(source: string, maxError: number): Promise<string | null> {
  // `window`, not `globalThis`: the page can replace the latter, never the former.
  const kept = (window as unknown as { __shotsmithEval?: unknown }).__shotsmithEval;
  // Called through a variable: an indirect eval, in the global scope as a classic script.
  // biome-ignore lint/security/noGlobalEval: the caller's own script, as a classic script
  const run = (typeof kept === 'function' ? kept : window.eval) as (code: string) => unknown;
  try {
    const completion = run(source);
    let pending = false;
    try {
      pending = completion instanceof Promise;
    } catch {
      // The page broke Promise: the script's end is not waited for.
    }
    if (pending) await completion;
    return null;
  } catch (err) {
    let message: unknown = err;
    try {
      if (typeof err === 'object' && err !== null) message = (err as { message?: unknown }).message;
    } catch {
      message = '';
    }
    if (typeof message !== 'string') message = '';
    const text = message as string;
    let line = '';
    for (let i = 0; i < text.length && i < maxError; i++) {
      const c = text[i] as string;
      if (c === '\n') break;
      line += c;
    }
    return line;
  }
}

/**
 * The document script of `scripts`: the page's `eval` kept, before the page's own scripts
 * run, where the page can neither replace nor remove it (runScript calls it).
 */
export function keepEval(): void {
  Object.defineProperty(window, '__shotsmithEval', {
    // biome-ignore lint/security/noGlobalEval: kept for runScript, not called here
    value: window.eval,
    writable: false,
    configurable: false,
    enumerable: false,
  });
}
