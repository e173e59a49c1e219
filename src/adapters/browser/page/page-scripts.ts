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
 * found from nine points of the viewport (a fixed or sticky layer over them whose text speaks
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
      for (const fy of [0.2, 0.5, 0.8]) {
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
 * Full page of a page whose content scrolls inside an element rather than the document
 * (`html, body {height: 100%; overflow: hidden}` around a scrolling `<main>`): the tallest
 * such element that is the page's main area (at least half the viewport each way) and holds
 * more than the document is let out to its full height, with every ancestor, so the document
 * becomes as tall as its content. Returns whether one was expanded. The page is not used again
 * as it was: the capture's context is reset (or replaced) afterwards.
 */
export function expandInnerScroller(): boolean {
  const docHeight = Math.max(
    document.documentElement?.scrollHeight ?? 0,
    document.body?.scrollHeight ?? 0,
  );
  let best: HTMLElement | null = null;
  for (const el of Array.from(document.querySelectorAll<HTMLElement>('body *'))) {
    if (el.scrollHeight <= el.clientHeight + 1) continue;
    const { overflowY } = getComputedStyle(el);
    if (overflowY !== 'auto' && overflowY !== 'scroll' && overflowY !== 'overlay') continue;
    const rect = el.getBoundingClientRect();
    if (rect.width < window.innerWidth / 2 || rect.height < window.innerHeight / 2) continue;
    if (best === null || el.scrollHeight > best.scrollHeight) best = el;
  }
  if (best === null || best.scrollHeight <= docHeight) return false;
  const free = (el: HTMLElement): void => {
    el.style.setProperty('height', 'auto', 'important');
    el.style.setProperty('max-height', 'none', 'important');
    el.style.setProperty('overflow', 'visible', 'important');
  };
  best.scrollTop = 0;
  free(best);
  for (let el = best.parentElement; el !== null; el = el.parentElement) free(el);
  return true;
}

export interface ScrollThroughArgs {
  /** CSS px: stop scrolling past this height (the page will be cut there anyway). */
  maxHeight: number;
  budgetMs: number;
  /** Pause after each step so IntersectionObservers and lazy images react. */
  pauseMs: number;
  /**
   * Scroll-reveal content kept revealed (SCROLL_REVEAL: a full-page image). Without it the
   * scroll only loads lazy content.
   */
  reveal?: ScrollRevealLimits;
}

/**
 * How a phone shows the page: the visual viewport's scale (below 1 when a page without a
 * `<meta name="viewport">` is laid out 980 px wide and zoomed out to the screen), and the
 * layout viewport's width in CSS px.
 */
export function pageZoom(): { scale: number; width: number } {
  return {
    scale: window.visualViewport?.scale ?? 1,
    width: document.documentElement?.clientWidth ?? window.innerWidth,
  };
}

/**
 * Scroll-reveal content (content a page shows as it scrolls into view: AOS, WOW.js,
 * IntersectionObserver or scroll handlers of its own) in a full page: how scrollThrough
 * waits for it and keeps it revealed. Bounds on the work it does in the page, too.
 */
export interface ScrollRevealLimits {
  /**
   * Each step waits at least this long after the frame that sent its scroll events, so that a
   * page that looks on an interval (WOW.js: every 50 ms) looks at every position: its next
   * look is due before this wait ends, however late both run.
   */
  stepMs: number;
  /**
   * At the bottom: the wait, from the last step's frame, before scrolling back up, so that the
   * page's handlers that run late (a throttled or debounced handler's last call: AOS, 99 ms;
   * an interval) see the bottom; then again while the page is still revealing there.
   */
  quietMs: number;
  /** At the bottom: the longest wait in all. */
  bottomMaxMs: number;
  /** Elements tracked at most. */
  maxTracked: number;
  /** Changed elements looked at per observer callback (the others of that callback are not). */
  maxPerBatch: number;
  /** An element's descendants looked at (a reveal that shows its children); more: none. */
  maxDescendants: number;
  /** ms spent looking, in all, while scrolling; past it nothing more is tracked. */
  maxWorkMs: number;
  /** Times an element the page hides again after the scroll is put back. */
  maxRestores: number;
}

export const SCROLL_REVEAL: ScrollRevealLimits = {
  stepMs: 55,
  quietMs: 110,
  bottomMaxMs: 300,
  maxTracked: 2_000,
  maxPerBatch: 100,
  maxDescendants: 24,
  maxWorkMs: 250,
  maxRestores: 3,
};

/**
 * Scrolls down one viewport at a time (bounded by height and time) so that lazy content
 * loads, then back to the top; lazy images within the captured height are switched to eager.
 * Returns the document height in CSS px.
 *
 * With `reveal`, content the page reveals as it scrolls into view stays revealed in the image,
 * whatever the page does once the scroll is back at the top (AOS with `once: false` hides it
 * again; an IntersectionObserver of the page's own may too). A MutationObserver notes each
 * element whose `class` or `style` changes while it is near the viewport, with those two
 * attributes while it showed most (fewest hidden among it and its first descendants: opacity
 * at most 0.1, not visible, or a flip's back face). Back at the top, an element the page has
 * hidden again is given them back, and again if the page hides it later (at most
 * `maxRestores` times), until the image; never one in the first viewport (left as at the
 * top), fixed or sticky or holding such (a "back to top" button, a header that shrinks), one
 * the page hid while it was fully in view (a carousel's slide), nor one a shown sibling
 * covers (a fading carousel's slides, tab panels). Nothing is looked at while nothing
 * changes. The scroll also waits for the page's late handlers: at each step `stepMs` after
 * its frame, at the bottom `quietMs`, and again while the page still reveals there.
 */
export async function scrollThrough(args: ScrollThroughArgs): Promise<number> {
  const started = performance.now();
  const docHeight = (): number =>
    Math.max(document.documentElement?.scrollHeight ?? 0, document.body?.scrollHeight ?? 0);
  // The next frame (its scroll events sent, its animation frame callbacks run), or 100 ms
  // when the page paints no frame.
  const frame = (): Promise<void> =>
    new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        resolve();
      };
      requestAnimationFrame(finish);
      setTimeout(finish, 100);
    });
  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

  interface Noted {
    el: Element;
    /** `class` and `style` while it showed most (null: no such attribute). */
    cls: string | null;
    style: string | null;
    /** Hidden ones among it and its first descendants, then. */
    hidden: number;
    /** Hidden again while fully in view: not a reveal (a carousel's slide). */
    unstable: boolean;
    restores: number;
    /** Whether it may be put back (asked once, at the top); null: not asked yet. */
    eligible: boolean | null;
  }
  const watch = (limits: ScrollRevealLimits) => {
    const noted = new Map<Element, Noted>();
    let guarding = false;
    let changes = 0;
    let workMs = 0;
    // Opacity above 0.1, visible, and not turned away with its back face hidden (a flip).
    const shown = (el: Element): boolean => {
      const style = getComputedStyle(el);
      if (style.visibility !== 'visible' || Number(style.opacity) <= 0.1) return false;
      if (style.backfaceVisibility !== 'hidden' || style.transform === 'none') return true;
      try {
        return new DOMMatrixReadOnly(style.transform).m33 >= 0;
      } catch {
        return true;
      }
    };
    // Its first descendants, in document order; null when it has more than the bound.
    const descendants = (el: Element): Element[] | null => {
      const out: Element[] = [];
      let node: Element | null = el.firstElementChild;
      while (node !== null) {
        if (out.length >= limits.maxDescendants) return null;
        out.push(node);
        if (node.firstElementChild !== null) {
          node = node.firstElementChild;
          continue;
        }
        while (node !== null && node !== el && node.nextElementSibling === null) {
          node = node.parentElement;
        }
        node = node !== null && node !== el ? node.nextElementSibling : null;
      }
      return out;
    };
    const hiddenIn = (el: Element): number => {
      let hidden = shown(el) ? 0 : 1;
      for (const d of descendants(el) ?? []) if (!shown(d)) hidden++;
      return hidden;
    };
    const fixedOrSticky = (el: Element): boolean => {
      const { position } = getComputedStyle(el);
      return position === 'fixed' || position === 'sticky';
    };
    const note = (el: Element): void => {
      const vh = window.innerHeight;
      const r = el.getBoundingClientRect();
      const boxed = r.width > 0 || r.height > 0;
      // Near the viewport: in it, about to be, or just scrolled past (a throttled handler
      // may reveal a step late: AOS, 99 ms).
      const near = boxed && r.top < vh * 1.5 && r.bottom > -2 * vh;
      if (near && r.bottom > -vh / 2) changes++;
      let entry = noted.get(el);
      if (entry === undefined) {
        if (!near || noted.size >= limits.maxTracked) return;
        entry = {
          el,
          cls: null,
          style: null,
          hidden: Infinity,
          unstable: false,
          restores: 0,
          eligible: null,
        };
        noted.set(el, entry);
      }
      const hidden = hiddenIn(el);
      if (hidden <= entry.hidden) {
        entry.cls = el.getAttribute('class');
        entry.style = el.getAttribute('style');
        entry.hidden = hidden;
      } else if ((r.top >= -1 && r.bottom <= vh + 1) || (r.top <= 0 && r.bottom >= vh)) {
        entry.unstable = true;
      }
    };
    // What a pass reads of elements other than the one asked about: each read once, since
    // such reads are slow from this world and a pass changes nothing until it is over.
    interface Reads {
      fixed: Map<Element, boolean>;
      boxes: Map<Element, { x: number; y: number; w: number; h: number; of: Element | null }>;
    }
    const reads = (): Reads => ({ fixed: new Map(), boxes: new Map() });
    // Whether the element or an ancestor is fixed or sticky: a loop up the parents (a
    // recursion would overflow on a document thousands of levels deep), every answer kept.
    const pinned = (el: Element, r: Reads): boolean => {
      const path: Element[] = [];
      let answer = false;
      for (let at: Element | null = el; at !== null; at = at.parentElement) {
        const known = r.fixed.get(at);
        if (known !== undefined) {
          answer = known;
          break;
        }
        path.push(at);
        const { position } = getComputedStyle(at);
        if (position === 'fixed' || position === 'sticky') {
          answer = true;
          break;
        }
      }
      for (const seen of path) r.fixed.set(seen, answer);
      return answer;
    };
    const box = (el: HTMLElement, r: Reads) => {
      let known = r.boxes.get(el);
      if (known === undefined) {
        known = {
          x: el.offsetLeft,
          y: el.offsetTop,
          w: el.offsetWidth,
          h: el.offsetHeight,
          of: el.offsetParent,
        };
        r.boxes.set(el, known);
      }
      return known;
    };
    // Asked once, back at the top: not in the first viewport, not fixed or sticky nor holding
    // such, not covered by a shown sibling (its neighbours looked at).
    const eligible = (entry: Noted, r: Reads): boolean => {
      const el = entry.el;
      const rect = el.getBoundingClientRect();
      const top = rect.top + window.scrollY;
      if (top >= 0 && rect.bottom + window.scrollY <= window.innerHeight) return false;
      if (pinned(el, r) || descendants(el)?.some(fixedOrSticky)) return false;
      if (!(el instanceof HTMLElement)) return true;
      const own = box(el, r);
      if (own.w * own.h <= 0) return true;
      for (const next of [true, false]) {
        let s = next ? el.nextElementSibling : el.previousElementSibling;
        for (let i = 0; s !== null && i < 12; i++) {
          if (s instanceof HTMLElement) {
            const b = box(s, r);
            const w = Math.min(b.x + b.w, own.x + own.w) - Math.max(b.x, own.x);
            const h = Math.min(b.y + b.h, own.y + own.h) - Math.max(b.y, own.y);
            if (b.of === own.of && w > 0 && h > 0 && (w * h) / (own.w * own.h) > 0.5 && shown(s)) {
              return false;
            }
          }
          s = next ? s.nextElementSibling : s.previousElementSibling;
        }
      }
      return true;
    };
    // Whether the page hid it again and it may be put back: reads only, so that a pass over
    // many asks for one layout, not one per element put back.
    const due = (entry: Noted, r: Reads): boolean => {
      const el = entry.el;
      if (entry.unstable || entry.restores >= limits.maxRestores || !el.isConnected) return false;
      if (el.getAttribute('class') === entry.cls && el.getAttribute('style') === entry.style) {
        return false;
      }
      if (hiddenIn(el) <= entry.hidden) return false;
      entry.eligible ??= eligible(entry, r);
      return entry.eligible;
    };
    const putBack = (entries: Noted[]): void => {
      const r = reads();
      for (const entry of entries.filter((e) => due(e, r))) {
        entry.restores++;
        for (const [name, value] of [
          ['class', entry.cls],
          ['style', entry.style],
        ] as const) {
          if (value === null) entry.el.removeAttribute(name);
          else entry.el.setAttribute(name, value);
        }
      }
    };
    const handle = (records: MutationRecord[]): void => {
      if (workMs > limits.maxWorkMs) return;
      const t0 = performance.now();
      const changed = new Set<Element>();
      const root = document.documentElement;
      for (let i = 0; i < records.length && i < limits.maxPerBatch * 10; i++) {
        const target = (records[i] as MutationRecord).target;
        if (target.nodeType !== 1 || target === root || target === document.body) continue;
        changed.add(target as Element);
        if (changed.size >= limits.maxPerBatch) break;
      }
      if (!guarding) for (const el of changed) note(el);
      else {
        const entries: Noted[] = [];
        for (const el of changed) {
          const entry = noted.get(el);
          if (entry !== undefined) entries.push(entry);
        }
        putBack(entries);
      }
      workMs += performance.now() - t0;
    };
    const observer = new MutationObserver(handle);
    if (document.documentElement !== null) {
      observer.observe(document.documentElement, {
        attributes: true,
        attributeFilter: ['class', 'style'],
        subtree: true,
      });
    }
    return {
      /** Changes seen near the viewport so far. */
      changes: (): number => changes,
      /** What the page hid again is put back, and from now on as soon as the page hides it. */
      restore: (): void => {
        handle(observer.takeRecords());
        guarding = true;
        workMs = 0;
        putBack([...noted.values()]);
      },
    };
  };

  const reveal = args.reveal;
  const reveals = reveal ? watch(reveal) : null;
  const pause = Math.max(args.pauseMs, reveal?.stepMs ?? 0);
  const step = Math.max(1, window.innerHeight);
  let y = 0;
  let lastFrame = 0;
  let changesAtScroll = 0;
  while (performance.now() - started < args.budgetMs) {
    const limit = Math.min(docHeight(), args.maxHeight);
    if (y + step >= limit) break;
    y += step;
    changesAtScroll = reveals?.changes() ?? 0;
    window.scrollTo({ top: y, left: 0, behavior: 'instant' });
    await frame();
    lastFrame = performance.now();
    await sleep(pause);
  }
  if (reveal && reveals && y > 0) {
    // At the bottom until the page's late handlers have run and its reveals there stopped.
    const bottom = performance.now();
    let seen = changesAtScroll;
    await sleep(reveal.quietMs - (performance.now() - lastFrame));
    while (reveals.changes() !== seen && performance.now() - bottom < reveal.bottomMaxMs) {
      seen = reveals.changes();
      await frame();
      await sleep(reveal.quietMs);
    }
  }
  window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
  for (const img of Array.from(document.images)) {
    if (img.loading !== 'lazy') continue;
    const top = img.getBoundingClientRect().top + window.scrollY;
    if (top < args.maxHeight) img.loading = 'eager';
  }
  await frame();
  await sleep(args.pauseMs);
  reveals?.restore();
  return docHeight();
}

export interface PaintReadyArgs {
  /** CSS px range of the document that will be in the image. */
  top: number;
  bottom: number;
  budgetMs: number;
  /** The range is the viewport's, wherever it is scrolled to (scroll_into_view, scripts). */
  fromScroll?: boolean;
}

/**
 * Waits (at most budgetMs) for web fonts and for the images in the captured range to load and
 * decode. Returns the document height in CSS px.
 */
export async function waitForPaintReady(args: PaintReadyArgs): Promise<number> {
  const inRange = (img: HTMLImageElement): boolean => {
    const rect = img.getBoundingClientRect();
    const top = rect.top + window.scrollY;
    const offset = args.fromScroll ? window.scrollY : 0;
    return (
      rect.width > 0 &&
      rect.height > 0 &&
      top < args.bottom + offset &&
      top + rect.height > args.top + offset
    );
  };
  const loaded = (img: HTMLImageElement): Promise<void> =>
    img.complete
      ? Promise.resolve()
      : new Promise((resolve) => {
          img.addEventListener('load', () => resolve(), { once: true });
          img.addEventListener('error', () => resolve(), { once: true });
        });
  const work = (async () => {
    try {
      await document.fonts.ready;
    } catch {
      // Font loading failures still let the page render with fallbacks.
    }
    const images = Array.from(document.images).filter(inRange);
    await Promise.all(
      images.map(async (img) => {
        await loaded(img);
        try {
          await img.decode();
        } catch {
          // Broken images render as such.
        }
      }),
    );
  })();
  await Promise.race([work, new Promise((resolve) => setTimeout(resolve, args.budgetMs))]);
  return Math.max(document.documentElement?.scrollHeight ?? 0, document.body?.scrollHeight ?? 0);
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
