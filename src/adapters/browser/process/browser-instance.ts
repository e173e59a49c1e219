/**
 * One Chromium process: spawned by us with the flags puppeteer's launch would give it, in a
 * process group of its own, speaking CDP over a pipe (no debugging port) through a transport
 * that bounds every message before decoding it (cdp-pipe.ts), with its own profile and short
 * temp directory (profile-dirs.ts), both removed when it closes. Its command line and its
 * environment, an allowlist, are chromium-flags.ts. Popups are closed as they appear,
 * downloads are denied. close() always ends the whole process tree.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import { connect } from 'puppeteer-core';
import { BOUNDS } from '../../../domain/bounds.ts';
import { withTimeout } from '../../../lib/abort.ts';
import type { Logger } from '../../../lib/logger.ts';
import { BoundedPipeTransport } from './cdp-pipe.ts';
import { WatchedChild } from './child-output.ts';
import { chromiumCommandLine, chromiumEnv } from './chromium-flags.ts';
import { type Engine, type Presentation, presentationOf } from './engine.ts';
import type { TreeUsage } from './proc.ts';
import { killTree, treeUsage } from './proc.ts';
import { makeProfileDirs, removeWithProcesses } from './profile-dirs.ts';

/** Browser.close over CDP gets this long before the process tree is SIGKILLed. */
export const BROWSER_CLOSE_TIMEOUT_MS = 5_000;
/** Launch (spawn + first CDP answer) bound. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** Bound on any single CDP command; the capture deadline usually ends things much earlier. */
const PROTOCOL_TIMEOUT_MS = 60_000;
/** Bound on the idle memory-pressure call. */
const RELIEVE_TIMEOUT_MS = 2_000;
/** How long a failed launch waits for the process to exit by itself, for its exit code. */
const LAUNCH_EXIT_WAIT_MS = 1_000;

/**
 * Process groups of browsers still running: if this process exits without closing them (a
 * fatal error, process.exit), they are killed with it, as puppeteer's launch() did.
 */
const liveGroups = new Set<number>();
process.on('exit', () => {
  for (const pid of liveGroups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/**
 * Puppeteer connected over the pipe, once the browser has its first page. A browser that exits
 * closes the pipe, which fails the connection at once; one that never answers is given
 * LAUNCH_TIMEOUT_MS (its late connection ends with its process).
 */
async function connectOverPipe(transport: BoundedPipeTransport): Promise<Browser> {
  const connecting = connect({
    transport,
    defaultViewport: null,
    protocolTimeout: PROTOCOL_TIMEOUT_MS,
  });
  const browser = await withTimeout(connecting, LAUNCH_TIMEOUT_MS, null);
  if (browser === null) {
    throw new Error(`chromium did not answer within ${LAUNCH_TIMEOUT_MS} ms`);
  }
  await browser.waitForTarget((target) => target.type() === 'page', {
    timeout: LAUNCH_TIMEOUT_MS,
  });
  return browser;
}

/** How the browser's captures present themselves (engine.ts); null, and a warning, if unknown. */
async function readPresentation(browser: Browser, logger: Logger): Promise<Presentation | null> {
  const [product, userAgent] = await Promise.all([browser.version(), browser.userAgent()]);
  const presentation = presentationOf(product, userAgent);
  if (presentation === null) {
    logger.warn(
      { product },
      'unknown Chromium build: captures keep its own user agent, and challenges get a pause',
    );
  }
  return presentation;
}

/** A launch that failed, with what Chromium said: its exit and the tail of its stderr. */
export class ChromiumLaunchError extends Error {
  readonly report: Record<string, unknown>;

  constructor(cause: unknown, report: Record<string, unknown>) {
    super(`chromium did not start: ${String(cause)}`, { cause });
    this.name = 'ChromiumLaunchError';
    this.report = report;
  }
}

export interface LaunchOptions {
  executablePath: string;
  dataDir: string;
  proxyUrl?: string;
  /** Largest protocol message read from Chromium (BOUNDS.browser.maxProtocolMessageBytes). */
  maxMessageBytes?: number;
  logger: Logger;
}

export interface ContextPage {
  context: BrowserContext;
  page: Page;
  /** Our own CDP session on the page target, for calls puppeteer does not wrap. */
  cdp: CDPSession;
}

/**
 * Every permission a page could ask for is denied up front, for all origins of our contexts:
 * a prompt is refused, and the answer a page sees (`denied`) is the same in every capture
 * instead of depending on what an earlier capture asked for.
 */
const DENIED_PERMISSIONS = [
  'accelerometer',
  'ambient-light-sensor',
  'background-fetch',
  'background-sync',
  'camera',
  'captured-surface-control',
  'clipboard-read',
  'clipboard-write',
  'display-capture',
  'geolocation',
  'gyroscope',
  'idle-detection',
  'keyboard-lock',
  'local-fonts',
  'local-network-access',
  'loopback-network',
  'local-network',
  'magnetometer',
  'microphone',
  'midi',
  'nfc',
  'notifications',
  'payment-handler',
  'periodic-background-sync',
  'persistent-storage',
  'pointer-lock',
  'push',
  'screen-wake-lock',
  'speaker-selection',
  'storage-access',
  'system-wake-lock',
  'top-level-storage-access',
  'window-management',
  'web-app-installation',
];

let nextInstanceId = 1;

export class BrowserInstance {
  readonly id: number;
  readonly browser: Browser;
  readonly pid: number;
  /** `<dataDir>/chromium/<random>`: profile and owner file. */
  readonly dir: string;
  /** `<temp root>/shotsmith-chromium-XXXXXX`: HOME, TMPDIR, sockets and owner file. */
  readonly tmpDir: string;
  /** Captures rendered on this browser. */
  captures = 0;
  /** Pages of ours open on this browser. */
  pages = 0;
  /** Replaced by a newer browser: serves the captures it has, takes no new ones. */
  draining = false;
  /**
   * How captures on this browser present themselves (engine.ts), read from the browser at
   * launch; null for a build we do not know, which keeps its own user agent.
   */
  readonly presentation: Presentation | null;
  /** The headless shell or the full browser; a build we do not know counts as the latter. */
  readonly engine: Engine;
  readonly #logger: Logger;
  readonly #child: WatchedChild;
  readonly #transport: BoundedPipeTransport;
  readonly #exited: Promise<void>;
  #session: CDPSession | null = null;
  #reaped = false;
  #closing: Promise<void> | null = null;

  private constructor(
    browser: Browser,
    spawned: ChildProcess & { pid: number },
    parts: {
      dir: string;
      tmpDir: string;
      child: WatchedChild;
      transport: BoundedPipeTransport;
      presentation: Presentation | null;
    },
    logger: Logger,
  ) {
    this.id = nextInstanceId++;
    this.presentation = parts.presentation;
    this.engine = parts.presentation?.engine ?? 'full';
    this.browser = browser;
    this.pid = spawned.pid;
    this.dir = parts.dir;
    this.tmpDir = parts.tmpDir;
    this.#child = parts.child;
    this.#transport = parts.transport;
    this.#logger = logger;
    this.#exited = new Promise<void>((resolve) => {
      const done = (): void => {
        this.#reaped = true;
        liveGroups.delete(spawned.pid);
        resolve();
      };
      if (spawned.exitCode !== null || spawned.signalCode !== null) done();
      else spawned.once('exit', done);
    });
  }

  static async launch(options: LaunchOptions): Promise<BrowserInstance> {
    const { dir, profile, tmp } = makeProfileDirs(options.dataDir);
    const child = new WatchedChild();
    let spawned: ChildProcess | undefined;
    try {
      // Detached: its own process group, so killTree can end every child. CDP goes over fds
      // 3 (to Chromium) and 4 (from it): no debugging port anyone else could reach. Its stdout
      // says nothing we read; its stderr is kept for the log (child-output.ts).
      spawned = spawn(
        options.executablePath,
        chromiumCommandLine(profile, {
          root: process.getuid?.() === 0,
          ...(options.proxyUrl ? { proxyUrl: options.proxyUrl } : {}),
        }),
        {
          detached: true,
          env: chromiumEnv(tmp),
          stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
        },
      );
      child.attach(spawned);
      const pid = spawned.pid;
      // Not run at all (ENOENT, EACCES): the error event says why, in the report below.
      if (pid === undefined) throw new Error('chromium could not be run');
      liveGroups.add(pid);
      const transport = new BoundedPipeTransport(
        spawned.stdio[3] as Writable,
        spawned.stdio[4] as Readable,
        options.maxMessageBytes ?? BOUNDS.browser.maxProtocolMessageBytes,
      );
      // A page's doing, and nobody else's: the browser carries on (docs/security.md).
      transport.ondrop = (dropped) => {
        options.logger.warn(
          { browserPid: pid, ...dropped },
          'dropped a protocol message over the bound',
        );
      };
      const browser = await connectOverPipe(transport);
      const presentation = await readPresentation(browser, options.logger);
      const instance = new BrowserInstance(
        browser,
        spawned as ChildProcess & { pid: number },
        { dir, tmpDir: tmp, child, transport, presentation },
        options.logger,
      );
      await instance.#setup();
      return instance;
    } catch (err) {
      // A binary that exits at once has usually exited by now; give it a moment, so the log
      // gets its own exit code rather than our SIGKILL.
      const report = await child.report(LAUNCH_EXIT_WAIT_MS);
      const pid = spawned?.pid;
      if (pid !== undefined) {
        await killTree(pid, spawned?.exitCode !== null || spawned?.signalCode !== null);
        liveGroups.delete(pid);
      }
      await removeWithProcesses(dir);
      await removeWithProcesses(tmp);
      throw new ChromiumLaunchError(err, report);
    }
  }

  /**
   * Why we cut the connection to this browser (a protocol message over the bound, or one
   * puppeteer could not handle); null when it went away by itself.
   */
  get cutReason(): string | null {
    return this.#transport.cutReason;
  }

  /**
   * How the browser process ended (waiting up to `waitMs` for it) and the last lines of its
   * stderr, as log fields.
   */
  exitReport(waitMs = 0): Promise<Record<string, unknown>> {
    return this.#child.report(waitMs);
  }

  async #setup(): Promise<void> {
    const session = await this.browser.target().createCDPSession();
    this.#session = session;
    // Default context too: a download must never start anywhere.
    await session.send('Browser.setDownloadBehavior', { behavior: 'deny' });
    session.on('Target.targetCreated', (event) => {
      const info = event.targetInfo;
      // Every window a page opens carries openerId, noopener ones included (checked on
      // Chromium 156); the pages we create have none.
      if (
        info.type !== 'page' ||
        (info.openerId === undefined && info.openerFrameId === undefined)
      ) {
        return;
      }
      this.#logger.info({ url: info.url.slice(0, 200) }, 'closing a popup');
      session.send('Target.closeTarget', { targetId: info.targetId }).catch(() => {});
    });
    await session.send('Target.setDiscoverTargets', { discover: true, filter: [{ type: 'page' }] });
  }

  get connected(): boolean {
    return this.browser.connected && this.#closing === null;
  }

  /** close() was called (a disconnect after this is expected, not a crash). */
  get closing(): boolean {
    return this.#closing !== null;
  }

  /**
   * A fresh isolated (incognito-like) context with one page, downloads denied, every
   * permission denied. Counts in `pages` from the start, so a browser is never retired under a
   * page being created; fails as soon as the browser goes away.
   */
  async newContextPage(proxyServer: string | null = null): Promise<ContextPage> {
    this.pages++;
    // puppeteer may wait forever on a target of a browser that died meanwhile.
    let onGone = (): void => {};
    const gone = new Promise<never>((_, reject) => {
      onGone = () => reject(new Error('the browser went away'));
    });
    this.browser.once('disconnected', onGone);
    if (!this.browser.connected) onGone();
    const creating = this.#newContextPage(proxyServer);
    try {
      return await Promise.race([creating, gone]);
    } catch (err) {
      this.pages--;
      creating.then((late) => late.context.close()).catch(() => {});
      throw err;
    } finally {
      this.browser.off('disconnected', onGone);
    }
  }

  async #newContextPage(proxyServer: string | null): Promise<ContextPage> {
    // A context of its own proxy server (a lane of the egress proxy: docs/proxies.md) still
    // sends loopback through it, as the browser's own proxy setting does.
    const context = await this.browser.createBrowserContext({
      downloadBehavior: { policy: 'deny' },
      ...(proxyServer === null ? {} : { proxyServer, proxyBypassList: ['<-loopback>'] }),
    });
    try {
      const session = this.#session;
      if (session && context.id) {
        const browserContextId = context.id;
        await Promise.all(
          DENIED_PERMISSIONS.map((name) =>
            session
              .send('Browser.setPermission', {
                permission: name === 'push' ? { name, userVisibleOnly: true } : { name },
                setting: 'denied',
                browserContextId,
              })
              // Names differ between Chromium versions; an unknown one is simply not there.
              .catch(() => {}),
          ),
        );
      }
      const page = await context.newPage();
      const cdp = await page.createCDPSession();
      return { context, page, cdp };
    } catch (err) {
      await context.close().catch(() => {});
      throw err;
    }
  }

  /**
   * Asks every process of the browser to free what it can (caches, decoded images, garbage):
   * Chromium's own answer to memory pressure, simulated. For idle moments; bounded, and a
   * failure changes nothing.
   */
  async relieveMemory(): Promise<void> {
    const session = this.#session;
    if (!session || !this.connected) return;
    await withTimeout(
      session.send('Memory.simulatePressureNotification', { level: 'critical' }).catch(() => {}),
      RELIEVE_TIMEOUT_MS,
      undefined,
    );
  }

  /**
   * Grants or denies (the default: DENIED_PERMISSIONS) geolocation to every origin of a
   * context: a capture with `geolocation` has it granted, the next one without has it denied.
   */
  async setGeolocation(context: BrowserContext, granted: boolean): Promise<void> {
    const session = this.#session;
    if (!session || !context.id) throw new Error('the browser session is gone');
    await session.send('Browser.setPermission', {
      permission: { name: 'geolocation' },
      setting: granted ? 'granted' : 'denied',
      browserContextId: context.id,
    });
  }

  /** Call once per page returned by newContextPage, after its context is closed. */
  pageClosed(): void {
    this.pages--;
  }

  usage(): TreeUsage {
    return treeUsage(this.pid);
  }

  /** Polite close with a bound, then SIGKILL of the whole tree; removes the directory. */
  close(timeoutMs = BROWSER_CLOSE_TIMEOUT_MS): Promise<void> {
    this.#closing ??= this.#close(timeoutMs);
    return this.#closing;
  }

  async #close(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    // Browser.close answers before the process has exited: it counts as closed once it has.
    const polite = this.browser.connected
      ? this.browser
          .close()
          .then(() => this.#exited)
          .then(
            () => 'closed' as const,
            () => 'failed' as const,
          )
      : Promise.resolve('gone' as const);
    const outcome = await Promise.race([polite, timedOut]);
    clearTimeout(timer);
    if (outcome !== 'closed') {
      this.#logger.warn({ pid: this.pid, outcome }, 'chromium did not close cleanly; killing it');
    }
    // Always: children of a crashed or stuck browser may outlive it.
    await killTree(this.pid, this.#reaped);
    await Promise.race([this.#exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    liveGroups.delete(this.pid);
    await removeWithProcesses(this.dir);
    await removeWithProcesses(this.tmpDir);
  }
}
