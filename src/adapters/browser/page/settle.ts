/**
 * The page at rest (docs/api.md, "The page at rest"): after load and the waits the
 * request asked for, the capture waits until the page has stopped changing for a short quiet
 * window, at most `settleMaxMs` (SETTLE_MAX_MS). What "changing" means is read from a probe the
 * page gets in its own world before any of its scripts run (activityProbe):
 *   - animation frames the page asks for (requestAnimationFrame: charts, counters, canvas and
 *     SVG animations redraw through it);
 *   - changes to its document after it has been parsed (a MutationObserver: content inserted
 *     late, classes and inline styles that animate, text that counts up);
 *   - timers (setTimeout) due within the bound: a pop-up shown "a second after load", a
 *     typewriter's next letter; the wait lasts until they have fired.
 * CSS animations and transitions do not count: they are frozen at their end state just before
 * the image, as before. Repeating timers (setInterval) do not count either: many pages poll
 * forever with them (scroll-reveal libraries, ad viewability); what they change is seen as
 * document changes. A still page pays one round trip.
 *
 * Other signals weighed (ARCHITECTURE.md, "The page at rest", says why they were left): Chromium's
 * Performance metrics (layout and script time: our own isolated-world scripts move them too),
 * screencast frames (an image encoded per frame while a page animates), virtual time (the
 * page's clock runs ahead of the real one on a reused page).
 */
import type { RenderOptions } from '../../../domain/captures/renderer.ts';
import type { CaptureWarning } from '../../../domain/captures/warnings.ts';
import { sleep } from '../process/abort.ts';
import type { CaptureRun } from './capture-run.ts';
import { settles } from './option-steps.ts';

/** The bound of the settle wait when SETTLE_MAX_MS is not set. */
export const SETTLE_MAX_MS = 2_000;
/** The page counts as at rest once nothing has changed for this long. */
export const SETTLE_QUIET_MS = 50;
/** Timers due later than this after they are set are not waited for (nor tracked). */
const TIMER_HORIZON_MS = 5_000;
/** Timers tracked at once; past this a page's further timers are not waited for. */
const MAX_TRACKED_TIMERS = 1_000;
/** Due times read back per check (the soonest ones). */
const MAX_DUE_READ = 50;
/** Longest sleep between two checks, so that the wait ends soon after the page rests. */
const SETTLE_POLL_MAX_MS = 100;

/** The global the probe answers on (a registered symbol: no name of the page's can clash). */
const PROBE_KEY = 'shotsmith.activity';

/** What the probe answers: ms since the last change, and the pending timers' due times. */
export interface PageActivity {
  /** ms since the page last asked for a frame or changed its document. */
  since: number;
  /** ms until each pending timer is due (the soonest MAX_DUE_READ; negative: overdue). */
  due: number[];
  /** Frames asked for and document changes seen so far (for the warning's message). */
  frames: number;
  changes: number;
}

/** How the settle wait ended. */
export interface RestOutcome {
  atRest: boolean;
  /** ms the wait lasted (0 when skipped). */
  waitedMs: number;
  /** What was still changing at the bound (for the warning), else null. */
  still: string | null;
}

const SKIPPED: RestOutcome = { atRest: true, waitedMs: 0, still: null };

/**
 * Document script, run in the page's own world in every frame before its scripts (serialised
 * on its own: it may use nothing from this module). Counts what changes the page (see above)
 * and answers it through `requestAnimationFrame[Symbol.for(PROBE_KEY)]()`, which no listing of
 * properties shows. The wrappers are proxies of the page's own functions, so they keep their
 * names, lengths and native `toString`. A page
 * can call or break the probe: it only ever shortens or lengthens its own capture's wait,
 * within the bound.
 */
export function activityProbe(args: {
  key: string;
  horizonMs: number;
  maxTimers: number;
  maxDue: number;
}): void {
  const key = Symbol.for(args.key);
  const raf = (window as unknown as { requestAnimationFrame?: Record<symbol, unknown> })
    .requestAnimationFrame;
  // Once per document (a document script may be added twice to one page).
  if (raf === undefined || raf[key] !== undefined) return;
  const now = (): number => performance.now();
  // Long before anything: until the page changes something, it has been still for ever. The
  // document's own parsing is the page loading (the network settle waits for that), not
  // changing, and counting it delayed every capture whose parsing ended late on a busy machine.
  let last = -1e9;
  let frames = 0;
  let changes = 0;
  const timers = new Map<unknown, number>();
  const answer = () => {
    const t = now();
    const due = [...timers.values()]
      .map((at) => at - t)
      .sort((a, b) => a - b)
      .slice(0, args.maxDue);
    // A pending frame is a timer due now.
    if (framesPending.size > 0) due.unshift(0);
    return { since: t - last, due, frames, changes };
  };
  const w = window as unknown as Record<string, unknown>;
  type Fn = (...a: unknown[]) => unknown;
  // Each wrapper stringifies as the function it wraps (a proxy alone reads "function () {
  // [native code] }", without the name), and so does the wrapped toString itself.
  const originals = new WeakMap<object, Fn>();
  const wrapOn = (
    owner: Record<string, unknown>,
    name: string,
    apply: (target: Fn, self: unknown, a: unknown[]) => unknown,
  ): void => {
    const target = owner[name];
    if (typeof target !== 'function') return;
    const proxy = new Proxy(target as Fn, {
      apply: (fn, self, a) => apply(fn, self, a),
      // The probe's answer, on the wrapped requestAnimationFrame under the probe's symbol:
      // no property of the page's global or of anything else lists it.
      get: (fn, prop, receiver) =>
        prop === key && name === 'requestAnimationFrame' ? answer : Reflect.get(fn, prop, receiver),
    });
    originals.set(proxy, target as Fn);
    owner[name] = proxy;
  };
  const wrap = (name: string, apply: (target: Fn, self: unknown, a: unknown[]) => unknown) =>
    wrapOn(w, name, apply);
  wrapOn(Function.prototype as unknown as Record<string, unknown>, 'toString', (fn, self, a) =>
    Reflect.apply(fn, (typeof self === 'function' && originals.get(self)) || self, a),
  );
  // A frame asked for and not yet drawn counts as a change under way: on a busy machine the
  // frames of an animation can be further apart than the quiet window.
  const framesPending = new Set<unknown>();
  wrap('requestAnimationFrame', (fn, self, a) => {
    frames++;
    last = now();
    const callback = a[0];
    if (typeof callback !== 'function' || framesPending.size >= args.maxTimers) {
      return Reflect.apply(fn, self, a);
    }
    let id: unknown;
    const run = function (this: unknown, ...rest: unknown[]): unknown {
      framesPending.delete(id);
      last = now();
      return Reflect.apply(callback, this, rest);
    };
    id = Reflect.apply(fn, self, [run]);
    framesPending.add(id);
    return id;
  });
  wrap('cancelAnimationFrame', (fn, self, a) => {
    framesPending.delete(a[0]);
    return Reflect.apply(fn, self, a);
  });
  wrap('setTimeout', (fn, self, a) => {
    const handler = a[0];
    const ms = Math.max(0, Number(a[1]) || 0);
    if (typeof handler !== 'function' || ms > args.horizonMs || timers.size >= args.maxTimers) {
      return Reflect.apply(fn, self, a);
    }
    let id: unknown;
    const fire = function (this: unknown, ...rest: unknown[]): unknown {
      timers.delete(id);
      return Reflect.apply(handler, this, rest);
    };
    id = Reflect.apply(fn, self, [fire, ...a.slice(1)]);
    timers.set(id, now() + ms);
    return id;
  });
  wrap('clearTimeout', (fn, self, a) => {
    timers.delete(a[0]);
    return Reflect.apply(fn, self, a);
  });
  const observe = (): void => {
    try {
      new MutationObserver((records) => {
        changes += records.length;
        last = now();
      }).observe(document, {
        subtree: true,
        childList: true,
        attributes: true,
        characterData: true,
      });
    } catch {
      // No document to watch (an XML document without a root yet): frames and timers only.
    }
  };
  // From the end of parsing: the parser's own insertions are the page loading, not changing.
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', observe, { once: true });
  } else {
    observe();
  }
}

/** The probe's arguments, for evaluateOnNewDocument. */
export const ACTIVITY_PROBE_ARGS = {
  key: PROBE_KEY,
  horizonMs: TIMER_HORIZON_MS,
  maxTimers: MAX_TRACKED_TIMERS,
  maxDue: MAX_DUE_READ,
} as const;

/** The probe's answer, read in the page's world (null when the page replaced the function). */
const READ_EXPRESSION = `(() => { const f = window.requestAnimationFrame?.[Symbol.for(${JSON.stringify(PROBE_KEY)})]; return typeof f === 'function' ? f() : null; })()`;

/** The page's answer checked: whatever the page did to the probe, numbers or null. */
export function pageActivity(value: unknown): PageActivity | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const num = (x: unknown): number | null =>
    typeof x === 'number' && Number.isFinite(x) ? x : null;
  const since = num(v.since);
  if (since === null || !Array.isArray(v.due)) return null;
  const due = v.due
    .slice(0, MAX_DUE_READ)
    .map(num)
    .filter((d): d is number => d !== null);
  return { since, due, frames: num(v.frames) ?? 0, changes: num(v.changes) ?? 0 };
}

async function readActivity(run: CaptureRun): Promise<PageActivity | null> {
  const answer = await run.step(
    run.cdp.send('Runtime.evaluate', { expression: READ_EXPRESSION, returnByValue: true }),
  );
  if (answer.exceptionDetails) return null;
  return pageActivity(answer.result.value);
}

/**
 * Waits until the page is at rest: nothing changed for SETTLE_QUIET_MS and no timer due
 * before the bound still pending; at most `maxMs`. Skipped with `wait_until:
 * domcontentloaded` (the capture asked not to wait) and when `maxMs` is 0.
 */
export async function settle(
  run: CaptureRun,
  o: RenderOptions,
  maxMs: number,
): Promise<RestOutcome> {
  if (!settles(o) || maxMs <= 0) return SKIPPED;
  run.enter('settle', 'waiting for the page to come to rest');
  const started = performance.now();
  const deadline = started + maxMs;
  let first: PageActivity | null = null;
  for (;;) {
    const activity = await readActivity(run);
    // No probe (a document the page wrote itself, a probe the page broke): nothing to wait on.
    if (activity === null) return { ...SKIPPED, waitedMs: performance.now() - started };
    first ??= activity;
    const now = performance.now();
    const left = deadline - now;
    // A timer due before the bound (or a frame asked for: due now) is waited for until it has
    // run, however overdue: what it does is the change to wait for.
    const timers = activity.due.filter((d) => d < left);
    const timerWait = timers.length > 0 ? Math.max(5, ...timers) : 0;
    const wait = Math.max(SETTLE_QUIET_MS - activity.since, timerWait, 0);
    if (wait <= 0) return { atRest: true, waitedMs: now - started, still: null };
    if (left <= 0) {
      return { atRest: false, waitedMs: now - started, still: stillChanging(first, activity) };
    }
    await sleep(Math.max(5, Math.min(wait, left, SETTLE_POLL_MAX_MS)), run.signal);
  }
}

/** What kept the page from resting, in words: what moved during the wait. */
function stillChanging(first: PageActivity, last: PageActivity): string {
  const parts: string[] = [];
  const frames = last.frames - first.frames;
  const changes = last.changes - first.changes;
  if (frames > 0) parts.push(`${frames} animation frame${frames === 1 ? '' : 's'} asked for`);
  if (changes > 0) parts.push(`${changes} document change${changes === 1 ? '' : 's'}`);
  if (last.due.length > 0) parts.push('timers or frames still pending');
  return parts.length > 0 ? parts.join(', ') : 'the page kept changing';
}

/** `not_at_rest` when the wait ended at its bound. */
export function restWarning(rest: RestOutcome): CaptureWarning | null {
  if (rest.atRest) return null;
  return {
    code: 'not_at_rest',
    message: `the page was still changing after ${Math.round(rest.waitedMs)} ms (${rest.still}); it was captured as it was`,
  };
}
