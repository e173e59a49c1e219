/**
 * Reading the rendered page (docs/security.md, "Hostile pages"). The helpers of
 * page-scripts.ts whose result the service reads run in puppeteer's isolated world of the main
 * frame, not in the page's own: the two share the DOM but not their built-ins, prototypes or
 * globals, so a page that replaces `Math.max`, `String.prototype.slice`, `JSON.stringify` or a
 * DOM getter changes nothing there. Puppeteer already creates that world in every document for
 * its own use (its utility world, which `waitForSelector` and `addStyleTag` run in), so this
 * costs no world and no protocol round trip of its own per navigation.
 *
 * The DOM itself is still the page's (a title of 100 MB, attributes of any size): each helper
 * bounds what it returns, and each value is checked here, for type and size, before the service
 * uses it.
 */
import type { Page, Realm } from 'puppeteer-core';
import { BOUNDS } from '../../../../domain/bounds.ts';
import type { PageMetadata } from '../../../../domain/captures/renderer.ts';
import { AppError } from '../../../../domain/errors.ts';
import type { CaptureState, ElementBox } from './page-scripts.ts';

/**
 * The main frame's isolated world. `Frame.isolatedRealm()` is typed internal in puppeteer 24
 * (it is what its own `waitForSelector` uses); a release without it fails here, loudly.
 */
export function isolatedWorld(page: Page): Realm {
  const frame = page.mainFrame() as unknown as { isolatedRealm?: () => Realm };
  if (typeof frame.isolatedRealm !== 'function') {
    throw new Error('puppeteer has no isolated world on its frames (Frame.isolatedRealm)');
  }
  return frame.isolatedRealm();
}

/**
 * Runs a page-scripts.ts helper in the isolated world. The answer is `unknown` on purpose: it
 * goes through one of the checks below before anything reads it.
 */
export function inIsolatedWorld<Args extends unknown[]>(
  page: Page,
  fn: (...args: Args) => unknown,
  ...args: Args
): Promise<unknown> {
  return isolatedWorld(page).evaluate(fn as (...a: unknown[]) => unknown, ...args);
}

/** A value that fails its check: the page (or Chromium) is not what the helper expects. */
function unexpected(what: string): AppError {
  return new AppError('internal_error', `the page returned an unexpected ${what}`);
}

/** A finite number (a height, a coordinate). */
export function pageNumber(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw unexpected(what);
  return value;
}

export function pageBoolean(value: unknown, what: string): boolean {
  if (typeof value !== 'boolean') throw unexpected(what);
  return value;
}

/** An element's box, or null when nothing matched. */
export function pageBox(value: unknown): ElementBox | null {
  if (value === null) return null;
  if (typeof value !== 'object') throw unexpected('element box');
  const box = value as Record<string, unknown>;
  return {
    x: pageNumber(box.x, 'element box'),
    y: pageNumber(box.y, 'element box'),
    width: pageNumber(box.width, 'element box'),
    height: pageNumber(box.height, 'element box'),
  };
}

/** One of `expected` (a selector the service sent), or null. */
export function pageChoice(
  value: unknown,
  expected: readonly string[],
  what: string,
): string | null {
  if (value === null) return null;
  if (typeof value !== 'string' || !expected.includes(value)) throw unexpected(what);
  return value;
}

/** A string of at most `max` characters, or null. */
export function pageText(value: unknown, max: number, what: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string' || value.length > max) throw unexpected(what);
  return value;
}

/** readMetadata's answer, every field held to its documented length. */
export function pageMetadata(value: unknown): Omit<PageMetadata, 'final_url' | 'http_status'> {
  if (typeof value !== 'object' || value === null) throw unexpected('metadata');
  const m = value as Record<string, unknown>;
  const og = (typeof m.og === 'object' && m.og !== null ? m.og : {}) as Record<string, unknown>;
  const text = (v: unknown) => pageText(v, BOUNDS.capture.maxMetadataText, 'metadata text');
  const url = (v: unknown) => pageText(v, BOUNDS.capture.urlMaxLength, 'metadata URL');
  return {
    title: text(m.title),
    description: text(m.description),
    og: { title: text(og.title), description: text(og.description), image: url(og.image) },
    icon_url: url(m.icon_url),
  };
}

/** domTokens' answer: three lists of strings, at most `pageValueMaxChars` in all. */
export function pageTokens(value: unknown): { classes: string[]; ids: string[]; hrefs: string[] } {
  if (typeof value !== 'object' || value === null) throw unexpected('token list');
  const t = value as Record<string, unknown>;
  let chars = 0;
  const list = (v: unknown): string[] => {
    if (!Array.isArray(v)) throw unexpected('token list');
    for (const token of v) {
      if (typeof token !== 'string') throw unexpected('token list');
      chars += token.length;
    }
    if (chars > BOUNDS.capture.pageValueMaxChars) throw unexpected('token list');
    return v as string[];
  };
  return { classes: list(t.classes), ids: list(t.ids), hrefs: list(t.hrefs) };
}

/** freezeAndHide's answer: counts of fonts, and a share of the viewport. */
export function pageCaptureState(value: unknown): CaptureState {
  if (typeof value !== 'object' || value === null) throw unexpected('capture state');
  const v = value as Record<string, unknown>;
  const count = (n: unknown) => {
    const c = pageNumber(n, 'capture state');
    if (!Number.isInteger(c) || c < 0 || c > 1000) throw unexpected('capture state');
    return c;
  };
  const share = pageNumber(v.banner, 'capture state');
  if (share < 0 || share > 1) throw unexpected('capture state');
  return { fontsLoading: count(v.fontsLoading), fontsFailed: count(v.fontsFailed), banner: share };
}

/** layoutWidth's answer: a width in CSS px, more than 0 and at most 100,000. */
export function pageLayoutWidth(value: unknown): number {
  const width = pageNumber(value, 'layout width');
  if (width <= 0 || width > 100_000) throw unexpected('layout width');
  return width;
}
