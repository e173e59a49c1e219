/**
 * One Chromium process: spawned by us with the flags puppeteer's launch would give it, in a
 * process group of its own, speaking CDP over a pipe (no debugging port) through a transport
 * that bounds every message before decoding it (cdp-pipe.ts), with its own profile under
 * `<dataDir>/chromium/<random>/` and its own short temp directory (`shotsmith-chromium-XXXXXX`
 * in the system temp directory: HOME, TMPDIR and its sockets), both removed when it closes.
 * Its environment is an allowlist (chromiumEnv). Popups are closed as they appear, downloads
 * are denied. close() always ends the whole process tree.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import type { Browser, BrowserContext, CDPSession, Page } from 'puppeteer-core';
import { connect, defaultArgs } from 'puppeteer-core';
import { BOUNDS } from '../../domain/bounds.ts';
import type { Logger } from '../../lib/logger.ts';
import { withTimeout } from './abort.ts';
import { BoundedPipeTransport } from './cdp-pipe.ts';
import { WatchedChild } from './child-output.ts';
import type { TreeUsage } from './proc.ts';
import { isAlive, killTree, ownStartTime, processesMentioning, treeUsage } from './proc.ts';

/** Browser.close over CDP gets this long before the process tree is SIGKILLed. */
export const BROWSER_CLOSE_TIMEOUT_MS = 5_000;
/** Launch (spawn + first CDP answer) bound. */
const LAUNCH_TIMEOUT_MS = 30_000;
/** Bound on any single CDP command; the capture deadline usually ends things much earlier. */
const PROTOCOL_TIMEOUT_MS = 60_000;
/** Bound on the idle memory-pressure call. */
const RELIEVE_TIMEOUT_MS = 2_000;
/** A profile directory without an owner file younger than this may still be starting. */
const OWNERLESS_GRACE_MS = 60_000;
/** How long a failed launch waits for the process to exit by itself, for its exit code. */
const LAUNCH_EXIT_WAIT_MS = 1_000;

/** Chromium's temp directories: `<temp root>/shotsmith-chromium-XXXXXX`. */
const TEMP_PREFIX = 'shotsmith-chromium-';
const TEMP_NAME = /^shotsmith-chromium-[A-Za-z0-9]{6}$/;
/**
 * The longest system temp directory Chromium's own temp directory goes under. Chromium puts its
 * singleton socket (its only named socket) at `$TMPDIR/org.chromium.Chromium.XXXXXX/
 * SingletonSocket`, 46 characters below TMPDIR, and a Unix socket path holds at most 107 bytes:
 * with our 26-character directory the base may have 35. A longer os.tmpdir() (TMPDIR set to a
 * long path) gives /tmp.
 */
const MAX_TEMP_BASE_BYTES = 32;

/** Where Chromium's temp directories go; never depends on DATA_DIR. */
export function chromiumTempRoot(): string {
  const base = tmpdir();
  return Buffer.byteLength(base) <= MAX_TEMP_BASE_BYTES ? base : '/tmp';
}

const DISABLED_FEATURES = [
  'Translate',
  'MediaRouter',
  'DialMediaRouteProvider',
  'OptimizationHints',
  'AcceptCHFrame',
  // A page we navigate away from must not stay alive (and reachable through history) in
  // the back/forward cache.
  'BackForwardCache',
  // HTTPS-Upgrades would first try https:// for an http:// target: a different request than
  // the one asked for.
  'HttpsUpgrades',
  'HttpsFirstBalancedModeAutoEnable',
  'InterestFeedContentSuggestions',
  'CertificateTransparencyComponentUpdater',
  'AutofillServerCommunication',
  'PrivacySandboxSettings4',
  'MediaEngagementBypassAutoplayPolicies',
  'ProcessPerSiteUpToMainFrameThreshold',
  'IsolateSandboxedIframes',
  'Prerender2',
  // Chromium 156 preloads its WebUI omnibox popups for every window, and each context's page is
  // a window of its own: two renderer processes (~15 MiB each) per page, never shown headless.
  // Browser UI only; the pages' own processes and site isolation are untouched.
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  // Chromium keeps a spare renderer process started for the browser context used last; with
  // captures of several clients (a context each) taking turns, the spare is nearly always for
  // the wrong context, killed, and started again: 169 renderer processes for 100 captures of
  // four clients at concurrency 4, against 11 without it, and 2.80 -> 3.88 captures/s. One
  // client's captures, cross-site or not, were as fast without it (391 -> 388 ms per capture).
  'SpareRendererForSitePerProcess',
];

export interface ChromiumArgsOptions {
  proxyUrl?: string;
  /** Whether we run as root, where Chromium's setuid/user-namespace sandbox cannot start. */
  root: boolean;
}

/** Command-line flags beyond puppeteer's defaults (which add --headless=new, --disable-extensions...). */
export function chromiumArgs(options: ChromiumArgsOptions): string[] {
  const args = [
    '--disable-background-networking',
    '--disable-sync',
    '--disable-component-update',
    '--disable-default-apps',
    '--disable-domain-reliability',
    '--disable-client-side-phishing-detection',
    // Debian's build still starts two chrome_crashpad_handler processes, outside our process
    // group (--disable-crashpad-for-testing would stop them but breaks every navigation with
    // ERR_ABORTED on Chromium 156). Their database lives under our HOME, so close() finds
    // and kills them by our directory in their command line.
    '--disable-breakpad',
    '--no-first-run',
    '--no-default-browser-check',
    '--no-pings',
    '--disable-quic',
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    `--disable-features=${DISABLED_FEATURES.join(',')}`,
    '--deny-permission-prompts',
    '--mute-audio',
    '--disable-dev-shm-usage',
    '--hide-scrollbars',
    '--disable-gpu',
    '--autoplay-policy=user-gesture-required',
  ];
  if (options.root) {
    // Running as root (as in this container): Chromium refuses to start its sandbox. The page
    // is still confined by site isolation and by the egress proxy, which is the boundary we
    // rely on for network reach.
    args.push('--no-sandbox');
  }
  if (options.proxyUrl) {
    // <-loopback> removes Chromium's implicit bypass of localhost, so every connection,
    // loopback included, goes through the egress proxy.
    // Chromium then never needs a name of its own (the proxy resolves every target), so its
    // resolver answers nothing: no DNS prefetch or preconnect lookups a page could use to
    // leak data past the proxy. The proxy itself is an IP literal, excluded from the rule.
    const proxyHost = new URL(options.proxyUrl).hostname;
    args.push(
      `--proxy-server=${options.proxyUrl}`,
      '--proxy-bypass-list=<-loopback>',
      `--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE ${proxyHost}`,
    );
  }
  return args;
}

const chromiumRoot = (dataDir: string): string => join(dataDir, 'chromium');

/**
 * Chromium's command line: what puppeteer's launch() gives for `headless: true, pipe: true`
 * with our profile and flags (its defaults, with our --disable-features merged into its own),
 * less --disable-popup-blocking: Chromium's own popup blocker stays on, so a page without a
 * user gesture (and ours never get one) cannot open windows at all; the targetcreated closer
 * is the second line.
 */
export function chromiumCommandLine(profile: string, options: ChromiumArgsOptions): string[] {
  const args = defaultArgs({ headless: true, userDataDir: profile, args: chromiumArgs(options) });
  return [...args.filter((arg) => arg !== '--disable-popup-blocking'), '--remote-debugging-pipe'];
}

/** Variables passed on to Chromium by name... */
const ENV_NAMES = new Set(['PATH', 'LANG', 'LANGUAGE', 'TZ']);
/** ...and by prefix: XDG directories, fontconfig settings, locale categories. */
const ENV_PREFIXES = ['XDG_', 'FONTCONFIG_', 'LC_'];

/**
 * Chromium's environment, an allowlist (docs/security.md, "Chromium's environment"): what it
 * needs to find programs, fonts, the locale and the time zone, and its own HOME and TMPDIR.
 * Nothing else of the service's environment (SERVER_SECRET, database, Redis, S3 and payment
 * credentials) is ever in a browser process, where a compromised renderer could read it.
 */
export function chromiumEnv(tmp: string, from: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(from)) {
    if (value === undefined) continue;
    if (ENV_NAMES.has(name) || ENV_PREFIXES.some((prefix) => name.startsWith(prefix))) {
      env[name] = value;
    }
  }
  return {
    ...env,
    HOME: tmp,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(tmp, '.config'),
    XDG_CACHE_HOME: join(tmp, '.cache'),
  };
}

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

function writeOwner(dir: string): void {
  const owner = `${process.pid} ${ownStartTime() ?? ''}`.trim();
  writeFileSync(join(dir, 'owner'), `${owner}\n`);
}

/** The temp directory a profile directory recorded, if it is one of ours. */
function recordedTempDir(dir: string): string | null {
  const recorded = readSmallFile(join(dir, 'tmpdir'))?.trim() ?? '';
  return TEMP_NAME.test(basename(recorded)) ? recorded : null;
}

/**
 * A small file read without trusting it (a temp root is shared with other local users): not
 * through a symlink, never blocking (a FIFO), a regular file only, at most `max` bytes.
 */
function readSmallFile(path: string, max = 256): string | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!fstatSync(fd).isFile()) return null;
    const buf = Buffer.alloc(max);
    return buf.toString('utf8', 0, readSync(fd, buf, 0, max, 0));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** A temp directory we may remove: a real directory (no symlink), ours, mode 0700. */
function isOwnTempDir(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o777) === 0o700;
  } catch {
    return false;
  }
}

/** SIGKILLs whatever still runs on `dir` (its path in their command line), then removes it. */
async function removeWithProcesses(dir: string): Promise<void> {
  for (const pid of processesMentioning(dir)) await killTree(pid);
  rmSync(dir, { recursive: true, force: true });
}

/** Whether a directory of ours is stale: its owner is gone (or it never got one). */
function isStale(dir: string): boolean {
  const owner = readOwner(dir);
  if (owner !== null) return !isAlive(owner.pid, owner.startTime);
  try {
    return Date.now() - lstatSync(dir).mtimeMs >= OWNERLESS_GRACE_MS;
  } catch {
    return false;
  }
}

/** The owner file holds `<pid> <start time>` (older ones only the pid). */
function readOwner(dir: string): { pid: number; startTime?: string } | null {
  const text = readSmallFile(join(dir, 'owner'));
  if (text === null) return null;
  const [pidText = '', startTime] = text.trim().split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return startTime ? { pid, startTime } : { pid };
}

/**
 * Removes profile directories left by earlier runs (the owning Node process is gone), first
 * SIGKILLing any Chromium still running on them, and Chromium temp directories of dead owners
 * (whichever data directory they served). Directories of live owners (another renderer on the
 * same data dir, e.g. a parallel test file) are left alone.
 */
export async function sweepStaleProfiles(dataDir: string, logger?: Logger): Promise<number> {
  const root = chromiumRoot(dataDir);
  let swept = 0;
  let names: string[] = [];
  try {
    names = readdirSync(root);
  } catch {
    // No profiles yet.
  }
  for (const name of names) {
    const dir = join(root, name);
    if (!isStale(dir)) continue;
    const temp = recordedTempDir(dir);
    await removeWithProcesses(dir);
    if (temp !== null && isOwnTempDir(temp)) await removeWithProcesses(temp);
    swept++;
  }
  const tempRoot = chromiumTempRoot();
  let temps: string[] = [];
  try {
    temps = readdirSync(tempRoot).filter((name) => TEMP_NAME.test(name));
  } catch {
    // Nothing to sweep.
  }
  for (const name of temps) {
    const dir = join(tempRoot, name);
    // Another local user may have planted it (or a symlink by that name): leave it.
    if (!isOwnTempDir(dir) || !isStale(dir)) continue;
    try {
      await removeWithProcesses(dir);
      swept++;
    } catch {
      // Another user's directory in a shared /tmp: not ours to remove.
    }
  }
  if (swept > 0) logger?.info({ swept, dir: root }, 'removed stale chromium profiles');
  return swept;
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
  logger?: Logger;
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
  readonly #logger: Logger | undefined;
  readonly #child: WatchedChild;
  readonly #transport: BoundedPipeTransport;
  readonly #exited: Promise<void>;
  #session: CDPSession | null = null;
  #reaped = false;
  #closing: Promise<void> | null = null;

  private constructor(
    browser: Browser,
    spawned: ChildProcess & { pid: number },
    parts: { dir: string; tmpDir: string; child: WatchedChild; transport: BoundedPipeTransport },
    logger?: Logger,
  ) {
    this.id = nextInstanceId++;
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
    const dir = join(chromiumRoot(options.dataDir), randomBytes(8).toString('hex'));
    const profile = join(dir, 'profile');
    mkdirSync(profile, { recursive: true });
    writeOwner(dir);
    // Everything Chromium writes outside the profile (NSS db, caches, crash dirs, temp files,
    // its singleton socket) goes to a short directory of its own: a Unix socket path has at
    // most 107 bytes, and DATA_DIR may be as long as an operator likes.
    let tmp: string;
    try {
      tmp = mkdtempSync(join(chromiumTempRoot(), TEMP_PREFIX));
      writeOwner(tmp);
      writeFileSync(join(dir, 'tmpdir'), `${tmp}\n`);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
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
      const connecting = connect({
        transport,
        defaultViewport: null,
        protocolTimeout: PROTOCOL_TIMEOUT_MS,
      });
      // A browser that exits closes the pipe, which fails the connection at once; one that
      // never answers is given LAUNCH_TIMEOUT_MS (its late connection ends with its process).
      const browser = await withTimeout(connecting, LAUNCH_TIMEOUT_MS, null);
      if (browser === null) {
        throw new Error(`chromium did not answer within ${LAUNCH_TIMEOUT_MS} ms`);
      }
      await browser.waitForTarget((target) => target.type() === 'page', {
        timeout: LAUNCH_TIMEOUT_MS,
      });
      const instance = new BrowserInstance(
        browser,
        spawned as ChildProcess & { pid: number },
        { dir, tmpDir: tmp, child, transport },
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
      this.#logger?.info({ url: info.url.slice(0, 200) }, 'closing a popup');
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
  async newContextPage(): Promise<ContextPage> {
    this.pages++;
    // puppeteer may wait forever on a target of a browser that died meanwhile.
    let onGone = (): void => {};
    const gone = new Promise<never>((_, reject) => {
      onGone = () => reject(new Error('the browser went away'));
    });
    this.browser.once('disconnected', onGone);
    if (!this.browser.connected) onGone();
    const creating = this.#newContextPage();
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

  async #newContextPage(): Promise<ContextPage> {
    const context = await this.browser.createBrowserContext({
      downloadBehavior: { policy: 'deny' },
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
      this.#logger?.warn({ pid: this.pid, outcome }, 'chromium did not close cleanly; killing it');
    }
    // Always: children of a crashed or stuck browser may outlive it.
    await killTree(this.pid, this.#reaped);
    await Promise.race([this.#exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
    liveGroups.delete(this.pid);
    await removeWithProcesses(this.dir);
    await removeWithProcesses(this.tmpDir);
  }
}
