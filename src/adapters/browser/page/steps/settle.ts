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
import type { Protocol } from 'puppeteer-core';
import type { RenderOptions } from '../../../../domain/captures/renderer.ts';
import type { CaptureWarning } from '../../../../domain/captures/warnings.ts';
import { sleep } from '../../../../lib/abort.ts';
import type { CaptureRun } from '../capture-run.ts';
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

/** A timer or animation frame pending in the page: ms until due (a frame: 0), ms since set. */
export interface PendingWork {
  due: number;
  age: number;
}

/** What the probe answers. */
export interface PageActivity {
  /** ms since the page last asked for a frame, drew one or changed its document. */
  since: number;
  /** Frames asked for and document changes seen so far (for the warning's message). */
  frames: number;
  changes: number;
  /** The soonest pending timers and frames (at most MAX_DUE_READ). */
  pending: PendingWork[];
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
  // The built-ins the probe uses, taken now: a page that replaces them later changes nothing
  // of the probe's work (and cannot make its own timers lose their ids through it).
  const apply = Reflect.apply;
  const get = Reflect.get;
  const perf = performance;
  const perfNow = Performance.prototype.now;
  const now = (): number => apply(perfNow, perf, []) as number;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const mapForEach = Map.prototype.forEach;
  const weakGet = WeakMap.prototype.get;
  const weakSet = WeakMap.prototype.set;
  const toNumber = Number;
  const round = Math.round;
  // Long before anything: until the page changes something, it has been still for ever. The
  // document's own parsing is the page loading (the network settle waits for that), not
  // changing, and counting it delayed every capture whose parsing ended late on a busy machine.
  let last = -1e9;
  let frames = 0;
  let changes = 0;
  /** Pending setTimeout timers and animation frames: id -> [due, set] (ms, page clock). */
  const timers = new Map<number, [number, number]>();
  const pendingFrames = new Map<number, [number, number]>();
  let timerCount = 0;
  let frameCount = 0;
  /**
   * The answer, as a short string of numbers (nothing of the page's can be in it): ms since
   * the last change, frames asked for, document changes, then for the soonest pending timers
   * and frames (a frame is due now) `due age` pairs, age being how long ago it was set.
   */
  const answer = (): string => {
    const t = now();
    // Numbers only, joined by string concatenation (nothing of the page's runs in it), and at
    // most maxDue pairs however many are pending.
    let out = `${round(t - last)} ${frames} ${changes}`;
    let pairs = 0;
    const add = (due: number, age: number): void => {
      if (pairs >= args.maxDue) return;
      pairs++;
      out += ` ${round(due)} ${round(age)}`;
    };
    apply(mapForEach, pendingFrames, [(entry: [number, number]) => add(0, t - entry[1])]);
    apply(mapForEach, timers, [(entry: [number, number]) => add(entry[0] - t, t - entry[1])]);
    return out;
  };
  const w = window as unknown as Record<string, unknown>;
  type Fn = (...a: unknown[]) => unknown;
  // Each wrapper stringifies as the function it wraps (a proxy alone reads "function () {
  // [native code] }", without the name), and so does the wrapped toString itself.
  const originals = new WeakMap<object, Fn>();
  const wrapOn = (
    owner: Record<string, unknown>,
    name: string,
    trap: (target: Fn, self: unknown, a: unknown[]) => unknown,
  ): void => {
    const target = owner[name];
    if (typeof target !== 'function') return;
    const proxy = new Proxy(target as Fn, {
      apply: (fn, self, a) => trap(fn, self, a),
      // The probe's answer, on the wrapped requestAnimationFrame under the probe's symbol:
      // no property of the page's global or of anything else lists it.
      get: (fn, prop, receiver) =>
        prop === key && name === 'requestAnimationFrame' ? answer : get(fn, prop, receiver),
    });
    apply(weakSet, originals, [proxy, target]);
    owner[name] = proxy;
  };
  const wrap = (name: string, trap: (target: Fn, self: unknown, a: unknown[]) => unknown) =>
    wrapOn(w, name, trap);
  wrapOn(Function.prototype as unknown as Record<string, unknown>, 'toString', (fn, self, a) =>
    apply(fn, (typeof self === 'function' && apply(weakGet, originals, [self])) || self, a),
  );
  /** A timer's or frame's id as the page's clear calls name it (`clearTimeout("5")` works). */
  const idOf = (id: unknown): number => {
    try {
      return toNumber(id);
    } catch {
      return Number.NaN;
    }
  };
  const forget = (a: unknown[]): void => {
    const id = idOf(a[0]);
    apply(mapDelete, timers, [id]);
    apply(mapDelete, pendingFrames, [id]);
  };
  // A frame asked for and not yet drawn counts as a change under way: on a busy machine the
  // frames of an animation can be further apart than the quiet window.
  wrap('requestAnimationFrame', (fn, self, a) => {
    frames++;
    last = now();
    const callback = a[0];
    if (typeof callback !== 'function' || frameCount >= args.maxTimers) return apply(fn, self, a);
    let id = Number.NaN;
    const run = function (this: unknown, ...rest: unknown[]): unknown {
      apply(mapDelete, pendingFrames, [id]);
      last = now();
      return apply(callback, this, rest);
    };
    id = idOf(apply(fn, self, [run]));
    frameCount = pendingFrames.size + 1;
    apply(mapSet, pendingFrames, [id, [last, last]]);
    return id;
  });
  wrap('setTimeout', (fn, self, a) => {
    const handler = a[0];
    if (typeof handler !== 'function' || timerCount >= args.maxTimers) return apply(fn, self, a);
    const delay = a[1];
    const ms = typeof delay === 'number' && delay > 0 ? delay : 0;
    if (ms > args.horizonMs) return apply(fn, self, a);
    let id = Number.NaN;
    const fire = function (this: unknown, ...rest: unknown[]): unknown {
      apply(mapDelete, timers, [id]);
      return apply(handler, this, rest);
    };
    const copy = [fire];
    for (let i = 1; i < a.length; i++) copy.push(a[i] as never);
    const answerId = apply(fn, self, copy);
    id = idOf(answerId);
    const at = now();
    timerCount = timers.size + 1;
    apply(mapSet, timers, [id, [at + ms, at]]);
    return answerId;
  });
  // The ids of timeouts, intervals and frames: any clear call may name any of them.
  for (const name of [
    'clearTimeout',
    'clearInterval',
    'cancelAnimationFrame',
    'webkitCancelAnimationFrame',
    'webkitCancelRequestAnimationFrame',
  ]) {
    wrap(name, (fn, self, a) => {
      forget(a);
      return apply(fn, self, a);
    });
  }
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

/** The longest answer read back (numbers and spaces; MAX_DUE_READ pairs fit many times). */
const MAX_ANSWER_CHARS = 4_096;
/** The read's own bound: the page's code runs in it if the page replaced the function. */
const READ_TIMEOUT_MS = 500;
/**
 * A timer this overdue, or a frame asked for this long ago, is not waited for: stuck (a
 * cleared id the probe did not see, a page whose frames stopped). Long enough for the gaps
 * of a machine under load: in a full test run a page's frames came 250 ms apart.
 */
const STUCK_MS = 1_000;
/** Shortest sleep while a frame or an overdue timer is pending. */
const PENDING_POLL_MS = 20;

/**
 * The probe's answer, read in the page's world: a string of at most MAX_ANSWER_CHARS, else
 * null. Only a string crosses, whatever the page put in place of the probe: nothing of the
 * page's comes back to this process beyond those characters.
 */
const READ_EXPRESSION = `(() => { try { const x = window.requestAnimationFrame[Symbol.for(${JSON.stringify(PROBE_KEY)})](); return typeof x === 'string' && x.length <= ${MAX_ANSWER_CHARS} ? x : null; } catch { return null; } })()`;

/** The page's answer checked: the probe's numbers, or null for anything else. */
export function pageActivity(value: unknown): PageActivity | null {
  if (typeof value !== 'string' || value.length > MAX_ANSWER_CHARS) return null;
  const numbers = value.split(' ').map(Number);
  if (numbers.length < 3 || numbers.length % 2 === 0) return null;
  if (!numbers.every(Number.isFinite)) return null;
  const [since = 0, frames = 0, changes = 0] = numbers;
  const pending: PendingWork[] = [];
  for (let i = 3; i + 1 < numbers.length && pending.length < MAX_DUE_READ; i += 2) {
    pending.push({ due: numbers[i] as number, age: numbers[i + 1] as number });
  }
  return { since, frames, changes, pending };
}

async function readActivity(run: CaptureRun): Promise<PageActivity | null> {
  let answer: Protocol.Runtime.EvaluateResponse;
  try {
    answer = await run.step(
      run.cdp.send('Runtime.evaluate', {
        expression: READ_EXPRESSION,
        returnByValue: true,
        silent: true,
        timeout: READ_TIMEOUT_MS,
      }),
    );
  } catch {
    // The run's end is the run's; any other failure of the read (a navigation under way, a
    // read that ran out of time) means there is nothing to wait on.
    if (run.signal.aborted) throw run.signal.reason;
    return null;
  }
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
    const elapsed = now - started;
    // Waited for until it has run, however overdue, unless stuck: a frame asked for (an
    // animation under way), and a timer due before the bound that was set before this wait
    // began. Timers set since are a chain's next step: what they change shows as changes.
    const waits = activity.pending
      .filter((w) =>
        w.due === 0 ? w.age <= STUCK_MS : w.due > -STUCK_MS && w.due < left && w.age > elapsed,
      )
      .map((w) => Math.max(PENDING_POLL_MS, w.due));
    const wait = Math.max(SETTLE_QUIET_MS - activity.since, ...waits, 0);
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
  if (last.pending.length > 0) parts.push('timers or frames still pending');
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
