/**
 * The page at rest (docs/api.md, "The page at rest"): after load and the waits the
 * request asked for, the capture waits until the page has stopped changing for a short quiet
 * window, at most `settleMaxMs` (SETTLE_MAX_MS). What "changing" means is read from a probe the
 * page gets in its own world before any of its scripts run (in-page/activity-probe.ts):
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
import { MAX_DUE_READ, PROBE_KEY } from '../in-page/activity-probe.ts';
import { settles } from './option-steps.ts';

/** The page counts as at rest once nothing has changed for this long. */
export const SETTLE_QUIET_MS = 50;
/** Longest sleep between two checks, so that the wait ends soon after the page rests. */
const SETTLE_POLL_MAX_MS = 100;

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
