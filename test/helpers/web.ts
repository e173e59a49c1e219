import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { type EnsureWebBuildOptions, ensureWebBuild } from '../../scripts/ensure-web-build.ts';

/**
 * Browser-test helpers: the web build (made the way `npm start` makes it), the Debian
 * Chromium driven by playwright-core, screenshots saved as artifacts, and the page-level
 * checks every page gets (CSP and script errors, layout shift, labelled form fields).
 */

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '..', '..', 'test-artifacts');
export const DESKTOP = { width: 1280, height: 800 };
/** A small phone: the narrowest width the pages are designed for. */
export const PHONE = { width: 360, height: 780 };

/** Builds web/dist when it is missing or stale (or a variant elsewhere, with `distDir`). */
export async function buildWeb(options: EnsureWebBuildOptions = {}): Promise<void> {
  const outcome = await ensureWebBuild(options);
  if (outcome.status === 'failed' || outcome.status === 'unavailable') {
    throw new Error(`web build: ${outcome.message}`);
  }
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // Tests run as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox'],
  });
}

declare global {
  interface Window {
    __layoutShift: number;
  }
}

/**
 * A context that records cumulative layout shift (shifts right after input excluded, as
 * the metric does) and collects console errors and page errors: CSP violations land there.
 */
export async function newContext(
  browser: Browser,
  options: { origin?: string } = {},
): Promise<{ context: BrowserContext; problems: string[] }> {
  const context = await browser.newContext({ viewport: DESKTOP, locale: 'en-US' });
  if (options.origin) {
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], {
      origin: options.origin,
    });
  }
  await context.addInitScript(() => {
    window.__layoutShift = 0;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries() as Array<
        PerformanceEntry & { value: number; hadRecentInput: boolean }
      >) {
        if (!entry.hadRecentInput) window.__layoutShift += entry.value;
      }
    }).observe({ type: 'layout-shift', buffered: true });
  });
  const problems: string[] = [];
  context.on('page', (page) => watchPage(page, problems));
  return { context, problems };
}

function watchPage(page: Page, problems: string[]): void {
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    // The API's own error answers (401 from /v1/auth/me when signed out, the refusals the
    // tests provoke) are logged by Chromium as failed loads; they are expected.
    if (/Failed to load resource: the server responded with a status of (4\d\d)/.test(text)) {
      return;
    }
    problems.push(`console error: ${text}`);
  });
}

/** Saves the page at desktop and phone widths: test-artifacts/<name>-desktop.png, -phone.png. */
export async function snapshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS_DIR, { recursive: true });
  const original = page.viewportSize() ?? DESKTOP;
  for (const [label, size] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    await page.setViewportSize(size);
    await settle(page);
    await page.screenshot({
      path: path.join(ARTIFACTS_DIR, `${name}-${label}.png`),
      fullPage: true,
    });
    const overflow = await horizontalOverflow(page);
    if (overflow.length > 0) {
      throw new Error(`${name} at ${label} width scrolls sideways: ${overflow.join('; ')}`);
    }
  }
  await page.setViewportSize(original);
  await settle(page);
}

/** Two animation frames, and every image in the page decoded. */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await Promise.all(
      [...document.images].map((img) => (img.complete ? null : img.decode().catch(() => null))),
    );
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
}

export const layoutShift = (page: Page): Promise<number> =>
  page.evaluate(() => window.__layoutShift);

/** Form fields without a label (a <label>, aria-label or aria-labelledby): must be none. */
export function unlabelledFields(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => {
        const field = el as HTMLInputElement;
        if (field.type === 'hidden') return false;
        return (
          (field.labels?.length ?? 0) === 0 &&
          !field.getAttribute('aria-label') &&
          !field.getAttribute('aria-labelledby')
        );
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
}

/**
 * Elements sticking out past the right edge of the viewport, which make the whole page
 * scroll sideways (content inside its own scrolling box, like code samples, is fine).
 */
export function horizontalOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const root = document.documentElement;
    const width = root.clientWidth;
    if (root.scrollWidth <= width) return [];
    const inScroller = (el: Element) => {
      for (let p = el.parentElement; p; p = p.parentElement) {
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
      }
      return false;
    };
    // Text can stick out of its element's box, so the culprits are only candidates.
    const candidates = [...document.body.querySelectorAll('*')]
      .filter((el) => el.getBoundingClientRect().right > width + 1 && !inScroller(el))
      .slice(0, 5)
      .map((el) => {
        const right = Math.round(el.getBoundingClientRect().right);
        return `${el.tagName.toLowerCase()}.${el.className} (${right}px)`;
      });
    return [`the page is ${root.scrollWidth}px wide`, ...candidates];
  });
}
