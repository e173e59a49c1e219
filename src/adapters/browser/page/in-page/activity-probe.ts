/**
 * The settle wait's probe (steps/settle.ts, "the page at rest"), a document script, with the
 * bounds it is given and the names the settle wait reads its answer by.
 */

/** The global the probe answers on (a registered symbol: no name of the page's can clash). */
export const PROBE_KEY = 'shotsmith.activity';
/** Timers due later than this after they are set are not waited for (nor tracked). */
const TIMER_HORIZON_MS = 5_000;
/** Timers tracked at once; past this a page's further timers are not waited for. */
const MAX_TRACKED_TIMERS = 1_000;
/** Due times read back per check (the soonest ones). */
export const MAX_DUE_READ = 50;

/**
 * Document script, run in the page's own world in every frame before its scripts (serialised
 * on its own: it may use nothing from this module). Counts what changes the page (settle.ts)
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
