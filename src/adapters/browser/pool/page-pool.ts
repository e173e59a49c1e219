/**
 * The pages captures run on, each in its own isolated browser context (capture-page.ts),
 * made on the supervisor's current browser. After a capture its page is reset (blank page,
 * storage wiped) in the background while the capture's slot already serves the next request
 * on another clean page: the pool holds two pages per slot (and the spares), so the reset is
 * off the critical path.
 *
 * A context keeps what no reset clears (HTTP authentication cache, HSTS and alt-svc state,
 * open sockets), so a page that rendered for one client only ever renders for that client
 * again (docs/security.md, "Isolation"). Another client's capture takes a never-used
 * spare; a few spares are kept ready off the critical path, replacing the least recently used
 * pages of other clients when the pool is full. After `idleShrinkMs` without a capture the
 * pool shrinks to one page (docs/deployment.md, "Memory").
 */
import { ProtocolError } from 'puppeteer-core';
import type { Logger } from '../../../lib/logger.ts';
import type { Lane } from '../../egress/proxy.ts';
import { CapturePage, type CaptureSettings } from '../page/capture-page.ts';
import type { BrowserInstance } from '../process/browser-instance.ts';
import type { BrowserSupervisor } from './browser-supervisor.ts';

/** Creating a context + page; past this the browser is considered stuck. */
const PAGE_CREATE_TIMEOUT_MS = 15_000;
/**
 * Longest wait for the client's own page while it is being reset, before another page is
 * taken (a reset takes tens of ms; this bounds a wedged one, whose own limit is 5 s).
 */
const OWN_PAGE_WAIT_MS = 500;

/**
 * A capture's own way out (docs/proxies.md): its pages are made with a lane of the egress
 * proxy, and serve only the client and route they were made for (their key).
 */
export interface PageLane {
  /** The route's key (egress/proxy-routes.ts): never a proxy's URL. */
  key: string;
  /** A new lane for a new page's context. */
  open(): Promise<Lane>;
}

/** Whom a page serves: the client, and on a lane the lane's route too. */
export const pageClient = (client: string, lane: PageLane | null): string =>
  lane === null ? client : `${client}\n${lane.key}`;

export interface PagePoolOptions {
  settings: CaptureSettings;
  /** Captures rendered at once. */
  concurrency: number;
  /** Pages per slot: 2, a page is reset while the slot renders on another; 1, on its path. */
  pagesPerSlot: number;
  /** Captures per context before it is replaced. */
  recycleAfter: number;
  /** Idle time after which the pool shrinks to one page. */
  idleShrinkMs: number;
  browsers: BrowserSupervisor;
  /** Aborted when the renderer closes: ends waits for pages, and no page is kept. */
  closed: AbortSignal;
  /** The renderer's captures, rendering and waiting for a slot: the pool shrinks at none. */
  captures: { rendering(): number; waiting(): number };
  logger: Logger;
}

export class PagePool {
  readonly #settings: CaptureSettings;
  readonly #browsers: BrowserSupervisor;
  readonly #closed: AbortSignal;
  readonly #captures: PagePoolOptions['captures'];
  readonly #logger: Logger;
  readonly #concurrency: number;
  readonly #maxPages: number;
  readonly #recycleAfter: number;
  readonly #idleShrinkMs: number;
  #idleTimer: NodeJS.Timeout | undefined;
  /** Pages being reset or replaced after a capture (giveBack in progress). */
  #givingBack = 0;
  /** Pages being reset after a capture, for the client they serve (giveBack in progress). */
  readonly #resetting = new Set<CapturePage>();
  /** Pages taken for a capture and not given back yet, with the client each was taken for. */
  readonly #taken = new Map<CapturePage, string>();
  /**
   * Clean pages, ready for a capture, least recently idle first: never used (`client` null,
   * for anyone) or reset after a capture (only for the same client).
   */
  readonly #idle: CapturePage[] = [];
  /** Never-used pages kept idle for clients without a page of their own. */
  readonly #spares: number;
  /** Spares being created by prepareSpares. */
  #creatingSpares = 0;
  /** Pages alive or being created, on any browser. */
  #pages = 0;
  /** Woken when a page becomes idle or the page count drops. */
  readonly #pageWaiters = new Set<() => void>();

  constructor(options: PagePoolOptions) {
    this.#settings = options.settings;
    this.#browsers = options.browsers;
    this.#closed = options.closed;
    this.#captures = options.captures;
    this.#logger = options.logger;
    this.#concurrency = options.concurrency;
    // Half the slots, at least one, on top of the slots' own pages: a client using every slot
    // keeps a page capturing and one being reset per slot, so it does not take a spare (which
    // another spare then replaces, a new context per capture) whenever a reset is still under
    // way. With one page per slot (the low-memory setting) there are none, and another
    // client's capture replaces a used page on its critical path.
    this.#spares = options.pagesPerSlot > 1 ? Math.max(1, Math.floor(this.#concurrency / 2)) : 0;
    this.#maxPages = this.#concurrency * options.pagesPerSlot + this.#spares;
    this.#recycleAfter = options.recycleAfter;
    this.#idleShrinkMs = options.idleShrinkMs;
  }

  /** Pages (each in its own context) alive or being made, on any browser. */
  get size(): number {
    return this.#pages;
  }

  /**
   * At start, one page is made before the renderer counts as started (the first capture finds
   * it ready); the others follow in the background, off the first capture's path
   * (docs/deployment.md, "Start-up").
   */
  async prepareFirstPage(): Promise<void> {
    const current = this.#browsers.current;
    if (current?.connected) await this.#createSpare(current);
    void this.prepareSpares().catch((err: unknown) => {
      if (!this.#closed.aborted)
        this.#logger.warn({ err: String(err) }, 'could not prepare a page');
    });
  }

  /**
   * A clean page on the current browser for `client`: its own idle page, a never-used spare, a
   * new page, a new page in place of another client's idle one, or the next one freed.
   */
  async take(
    signal: AbortSignal,
    taker: string,
    lane: PageLane | null = null,
  ): Promise<CapturePage> {
    const client = pageClient(taker, lane);
    // Waiting for the client's own page being reset ends here at the latest.
    const ownWaitEnd = performance.now() + OWN_PAGE_WAIT_MS;
    for (;;) {
      signal.throwIfAborted();
      const current = await this.#browsers.instance();
      for (const page of this.#idle.filter((p) => p.instance !== current || !p.usable)) {
        void this.#discard(page);
      }
      const own = this.#idle.findLast((p) => p.client === client);
      // A spare goes straight out: never for a capture through a proxy.
      const spare = lane === null ? this.#idle.find((p) => p.client === null) : undefined;
      // A client holds up to two pages per capture it runs, so that one is reset while it
      // captures on the other: its first captures take spares (which prepareSpares replaces),
      // and after that it finds a page of its own ready. Past that, the client's page being
      // reset is worth its wait (tens of ms): a spare taken instead would be a new context
      // made to replace it for every capture. A failed reset discards it and wakes us; a slow
      // one (a wedged renderer) is waited for OWN_PAGE_WAIT_MS at most.
      const waitForOwn =
        own === undefined &&
        current !== null &&
        performance.now() < ownWaitEnd &&
        [...this.#resetting].some((p) => p.client === client && p.instance === current) &&
        (spare === undefined || !this.#mayHoldAnother(client));
      const page = own ?? (waitForOwn ? undefined : spare);
      if (page) {
        this.#idle.splice(this.#idle.indexOf(page), 1);
        this.#taken.set(page, client);
        // Whose it is from now on, before any capture: one given back unused (its capture
        // aborted meanwhile) is never a spare for another client, nor another route's.
        page.client = client;
        return page;
      }
      if (waitForOwn) {
        await this.#nextPageEvent(signal, ownWaitEnd - performance.now());
        continue;
      }
      const made =
        this.#pages < this.#maxPages || this.#idle[0] !== undefined
          ? await this.#makeRoomAndCreate(current, lane)
          : null;
      if (made !== null) {
        this.#taken.set(made, client);
        made.client = client;
        return made;
      }
      await this.#nextPageEvent(signal);
    }
  }

  /** A new page, in place of the longest idle page of other clients when the pool is full. */
  #makeRoomAndCreate(current: BrowserInstance, lane: PageLane | null): Promise<CapturePage> {
    const other = this.#pages < this.#maxPages ? undefined : this.#idle[0];
    if (other) void this.#discard(other);
    return this.#createPage(current, lane);
  }

  /** Whether `client` holds fewer than two pages per capture it would then run. */
  #mayHoldAnother(client: string): boolean {
    let running = 1;
    let held = 0;
    for (const owner of this.#taken.values()) if (owner === client) running++;
    for (const page of this.#resetting) if (page.client === client) held++;
    return held + running - 1 < 2 * running;
  }

  /**
   * After a capture, off its critical path: reset the page for the next capture, or replace it
   * (failed capture, context due for recycling, page on a replaced browser).
   */
  async giveBack(page: CapturePage, ok: boolean, used: boolean): Promise<void> {
    this.#taken.delete(page);
    this.#givingBack++;
    try {
      const current = this.#browsers.current;
      let keep =
        ok &&
        !this.#closed.aborted &&
        page.usable &&
        page.instance === current &&
        current.connected &&
        page.captures < this.#recycleAfter;
      if (keep && used) {
        this.#resetting.add(page);
        try {
          await page.reset();
        } catch (err) {
          keep = false;
          if (!this.#closed.aborted) {
            this.#logger.warn({ err: String(err) }, 'page reset failed; replacing the context');
          }
        }
      }
      // Made idle or discarded below, in the same turn: either wakes a client waiting for it.
      this.#resetting.delete(page);
      if (keep && !this.#closed.aborted && page.instance === this.#browsers.current) {
        this.#makeIdle(page);
      } else {
        await this.#discard(page);
      }
      if (this.#closed.aborted) return;
      this.#browsers.checkHealth();
      await this.prepareSpares().catch((err: unknown) => {
        if (!this.#closed.aborted)
          this.#logger.warn({ err: String(err) }, 'could not prepare a page');
      });
    } catch (err) {
      this.#logger.error({ err: String(err) }, 'returning a page failed');
    } finally {
      this.#givingBack--;
    }
    this.scheduleShrink();
  }

  /**
   * Keeps at least `concurrency` pages in the pool and the spares never-used ones idle, created
   * on the current browser; when the pool is full, the least recently idle pages of clients
   * make room for the spares.
   */
  async prepareSpares(): Promise<void> {
    const current = this.#browsers.current;
    if (!current?.connected || this.#browsers.recycling || this.#closed.aborted) return;
    const unused = this.#idle.filter((page) => page.client === null).length;
    const missing = Math.max(
      this.#concurrency - this.#pages,
      this.#spares - unused - this.#creatingSpares,
    );
    const creating: Promise<void>[] = [];
    for (let i = 0; i < missing; i++) {
      if (this.#pages >= this.#maxPages) {
        const used = this.#idle.find((page) => page.client !== null);
        if (!used) break;
        void this.#discard(used);
      }
      creating.push(this.#createSpare(current));
    }
    await Promise.all(creating);
  }

  /** The idle pages of a browser that went away are closed. */
  dropIdleOn(instance: BrowserInstance): void {
    for (const page of this.#idle.filter((p) => p.instance === instance)) void this.#discard(page);
  }

  /** After a new browser became current: the idle pages of the old one are closed. */
  async dropStale(): Promise<void> {
    const stale = this.#idle.filter((page) => page.instance !== this.#browsers.current);
    await Promise.all(stale.map((page) => this.#discard(page)));
  }

  /** At close: no page is idle any more (the browsers close them all). */
  clear(): void {
    clearTimeout(this.#idleTimer);
    this.#idle.length = 0;
  }

  /** (Re)starts the idle countdown; called whenever a capture's page has been given back. */
  scheduleShrink(): void {
    clearTimeout(this.#idleTimer);
    if (this.#closed.aborted) return;
    this.#idleTimer = setTimeout(() => void this.#shrinkWhenIdle(), this.#idleShrinkMs);
    this.#idleTimer.unref();
  }

  /** A new context + page, counted in #pages, bounded in time (a late one is closed). */
  async #createPage(instance: BrowserInstance, lane: PageLane | null = null): Promise<CapturePage> {
    this.#pages++;
    const creating = (async () =>
      CapturePage.create(instance, this.#settings, lane === null ? null : await lane.open()))();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Error('creating a page timed out');
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(timeout), PAGE_CREATE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([creating, timedOut]);
    } catch (err) {
      this.#pages--;
      this.#wakePageWaiters();
      creating.then((late) => late.dispose()).catch(() => {});
      // A browser that is connected but does not answer (wedged) would fail every capture:
      // replace it.
      if (
        (err === timeout || err instanceof ProtocolError) &&
        instance === this.#browsers.current
      ) {
        this.#logger.warn({ browser: instance.id, err: String(err) }, 'could not create a page');
        void this.#browsers.recycle('page creation failed');
      }
      await this.#browsers.retireIfDrained(instance);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async #createSpare(current: BrowserInstance): Promise<void> {
    this.#creatingSpares++;
    try {
      const page = await this.#createPage(current);
      if (this.#closed.aborted || page.instance !== this.#browsers.current) {
        await this.#discard(page);
      } else {
        this.#makeIdle(page);
      }
    } finally {
      this.#creatingSpares--;
    }
  }

  /**
   * Resolves when a page becomes idle or a place in the pool frees up, or after `timeoutMs`
   * when given.
   */
  #nextPageEvent(signal: AbortSignal, timeoutMs?: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        clearTimeout(timer);
        this.#pageWaiters.delete(wake);
        signal.removeEventListener('abort', onAbort);
      };
      const wake = (): void => {
        done();
        resolve();
      };
      const onAbort = (): void => {
        done();
        reject(signal.reason);
      };
      this.#pageWaiters.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined) timer = setTimeout(wake, Math.max(0, timeoutMs));
    });
  }

  #wakePageWaiters(): void {
    for (const wake of [...this.#pageWaiters]) wake();
  }

  #makeIdle(page: CapturePage): void {
    this.#idle.push(page);
    this.#wakePageWaiters();
  }

  /** Closes a page for good (its context with it) and frees its place in the pool. */
  async #discard(page: CapturePage): Promise<void> {
    const index = this.#idle.indexOf(page);
    if (index !== -1) this.#idle.splice(index, 1);
    this.#pages--;
    this.#wakePageWaiters();
    const clean = await page.dispose();
    const instance = page.instance;
    if (!clean && instance.connected && instance === this.#browsers.current) {
      this.#logger.warn(
        { browser: instance.id },
        'a browser context did not close; replacing the browser',
      );
      void this.#browsers.recycle('context close timed out');
    }
    await this.#browsers.retireIfDrained(instance);
  }

  /**
   * No capture for a while: keep one page (a never-used spare when there is one, which any
   * client may take, else the most recently used), close the others with their contexts and
   * renderers, and let Chromium's processes free caches and garbage. The next captures refill
   * the pool as they go (a page costs tens of ms). Nothing here changes which client a context
   * may serve.
   */
  async #shrinkWhenIdle(): Promise<void> {
    if (this.#closed.aborted) return;
    const current = this.#browsers.current;
    // Busy (captures, pages being made, a browser being replaced): try again later.
    if (
      this.#captures.rendering() > 0 ||
      this.#captures.waiting() > 0 ||
      this.#creatingSpares > 0 ||
      this.#givingBack > 0 ||
      this.#browsers.changing ||
      !current?.connected
    ) {
      this.scheduleShrink();
      return;
    }
    const kept = this.#idle.findLast((page) => page.client === null) ?? this.#idle.at(-1);
    const extra = this.#idle.filter((page) => page !== kept);
    try {
      await Promise.all(extra.map((page) => this.#discard(page)));
      if (this.#captures.rendering() === 0 && current === this.#browsers.current) {
        await current.relieveMemory();
      }
      this.#logger.info({ closed: extra.length, pages: this.#pages }, 'idle: pool shrunk');
    } catch (err) {
      this.#logger.warn({ err: String(err) }, 'idle: could not shrink the pool');
    }
  }
}
