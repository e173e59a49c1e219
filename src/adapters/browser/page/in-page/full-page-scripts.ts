/**
 * Functions that run inside the rendered page for a full page, a PDF or a box of it
 * (puppeteer serialises them; each is self-contained, as in page-scripts.ts): the inner
 * scroller let out, the scroll through the page that loads lazy content and keeps
 * scroll-reveal content revealed, and the wait for fonts and images. All run in the isolated
 * world (`inIsolatedWorld`) and bound their work and what they return.
 */

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
