/**
 * What a capture leaves in its browser context, and the clearing of it before the next one.
 * Every origin the page touched (its requests, its frames' navigations) is recorded, and the
 * partitioned storage key of each cross-site frame; after the capture the page goes to
 * about:blank (the capture's documents, timers and injected styles end there), then cookies,
 * HTTP cache, navigation history and window.name are cleared, and every recorded origin and
 * key has all its storage wiped (localStorage, sessionStorage, IndexedDB, Cache Storage,
 * service workers, ...). What cannot be trusted to be cleared makes the context be replaced
 * instead (`replaceReason`).
 */
import type { CDPSession, Frame, Page } from 'puppeteer-core';
import { noop, sleep } from '../../../lib/abort.ts';

/** The between-captures reset (blank page + clearing) must finish within this. */
export const RESET_TIMEOUT_MS = 5_000;
/** More origins (or storage keys) than this: the context is replaced instead of cleared. */
const MAX_TRACKED_ORIGINS = 200;

function httpOrigin(url: string): string | null {
  if (!url.startsWith('http:') && !url.startsWith('https:')) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

export class ContextReset {
  readonly #page: Page;
  readonly #cdp: CDPSession;
  readonly #origins = new Set<string>();
  /** Partitioned storage keys of cross-site frames (`https://b.example/^0https://a.example`). */
  readonly #storageKeys = new Set<string>();
  readonly #pendingKeys = new Set<Promise<void>>();
  /** Set when clearing cannot be trusted to cover everything: replace the context instead. */
  #replaceReason: string | null = null;

  constructor(page: Page, cdp: CDPSession) {
    this.#page = page;
    this.#cdp = cdp;
  }

  /** Why the context is to be replaced rather than cleared; null while clearing will do. */
  get replaceReason(): string | null {
    return this.#replaceReason;
  }

  /** Something no clearing undoes was done to the page: its context is replaced instead. */
  replaceInstead(reason: string): void {
    this.#replaceReason = reason;
  }

  noteOrigin(url: string): void {
    const origin = httpOrigin(url);
    if (origin === null || this.#origins.has(origin)) return;
    if (this.#origins.size >= MAX_TRACKED_ORIGINS) {
      this.#replaceReason = 'too many origins';
      return;
    }
    this.#origins.add(origin);
  }

  /**
   * Records the storage key of a subframe. A cross-site iframe stores under a partitioned key
   * (its origin + the top-level site) that clearing its origin does not reach, so the key
   * itself is cleared after the capture. Chromium may still answer with the parent's key just
   * after the frame navigated, hence the check and the retries; a key we cannot learn means
   * the context is replaced rather than trusted.
   */
  noteStorageKey(frame: Frame): void {
    const origin = httpOrigin(frame.url());
    if (origin === null) return;
    // puppeteer 24 has no public frame id; without it we cannot ask, so we do not trust.
    const frameId = (frame as unknown as { _id?: unknown })._id;
    if (typeof frameId !== 'string') {
      this.#replaceReason = 'frame storage key unknown';
      return;
    }
    const pending = (async () => {
      for (let attempt = 0; attempt < 8; attempt++) {
        try {
          const { storageKey } = await this.#cdp.send('Storage.getStorageKey', { frameId });
          if (storageKey.startsWith(`${origin}/`)) {
            if (storageKey !== `${origin}/`) {
              if (this.#storageKeys.size >= MAX_TRACKED_ORIGINS) {
                this.#replaceReason = 'too many storage keys';
              }
              this.#storageKeys.add(storageKey);
            }
            return;
          }
        } catch {
          // Not committed yet, or already gone.
        }
        await sleep(25);
      }
      this.#replaceReason = 'frame storage key unknown';
    })();
    this.#pendingKeys.add(pending);
    pending.finally(() => this.#pendingKeys.delete(pending)).catch(noop);
  }

  /**
   * The blank page, then everything cleared at once. `usable` is asked once the frames' keys
   * are known: a page that is no longer worth it is not cleared (its context goes).
   */
  async clear(usable: () => boolean): Promise<void> {
    await this.#page.goto('about:blank', { waitUntil: 'load', timeout: RESET_TIMEOUT_MS });
    while (this.#pendingKeys.size > 0) await Promise.all([...this.#pendingKeys]);
    if (!usable()) return;
    const origins = [...this.#origins];
    const keys = [...this.#storageKeys];
    this.#origins.clear();
    this.#storageKeys.clear();
    const cdp = this.#cdp;
    await Promise.all([
      cdp.send('Network.clearBrowserCookies'),
      cdp.send('Network.clearBrowserCache'),
      cdp.send('Page.resetNavigationHistory'),
      this.#page.evaluate(() => {
        window.name = '';
      }),
      ...origins.map((origin) =>
        cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' }),
      ),
      ...keys.map((storageKey) =>
        cdp.send('Storage.clearDataForStorageKey', { storageKey, storageTypes: 'all' }),
      ),
    ]);
  }
}
