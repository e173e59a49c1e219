/**
 * The browser's life cycle: one current Chromium that new captures go to, and the ones being
 * replaced. A browser is replaced (the new one launched before the old one closes) after
 * `browserRecycleAfter` captures, when its processes' resident memory passes
 * `maxBrowserRssBytes`, or when it stops making pages; the old one serves the captures it has
 * and closes once its last page is gone. When Chromium cannot start, crashes or disconnects,
 * it is relaunched with backoff in the background (docs/security.md): captures on it and
 * captures that arrive while no browser can be had get the one 503 (restart-backoff.ts), and
 * the log gets Chromium's exit and the last lines of its stderr.
 *
 * It knows no pages: the pool and the renderer hear what happened through SupervisorHooks.
 */
import { AppError } from '../../../domain/errors.ts';
import { noop, sleep } from '../../../lib/abort.ts';
import type { Logger } from '../../../lib/logger.ts';
import { BrowserInstance, ChromiumLaunchError } from '../process/browser-instance.ts';
import { rendererSandbox } from '../process/proc.ts';
import { sweepStaleProfiles } from '../process/profile-dirs.ts';
import { RestartBackoff } from './restart-backoff.ts';

/** How often (at most) the browser's memory is measured, after a capture. */
const USAGE_CHECK_INTERVAL_MS = 5_000;
/**
 * A replaced browser is closed once its last capture is done; this is only the backstop for
 * a capture that somehow outlives its deadline.
 */
const DRAIN_TIMEOUT_MS = 600_000;
/** Relaunch attempts after a failed launch back off from this, doubling... */
const MIN_RELAUNCH_BACKOFF_MS = 500;
/** ...up to this. */
const MAX_RELAUNCH_BACKOFF_MS = 10_000;
/** What a launch usually takes, for Retry-After. */
const RELAUNCH_ESTIMATE_MS = 2_000;
/** How long the exit of a crashed browser is awaited for the log line. */
const CRASH_EXIT_WAIT_MS = 2_000;

export interface SupervisorOptions {
  executablePath: string;
  /** Profiles and temp files go under `<dataDir>/chromium/`. */
  dataDir: string;
  /** Egress proxy every connection of the page goes through (loopback included). */
  proxyUrl?: string;
  /** Largest CDP message read from Chromium (CDP_MAX_MESSAGE_MB). */
  maxMessageBytes: number;
  /** Captures per browser before it is replaced. */
  browserRecycleAfter: number;
  /** Resident (anonymous) memory of the browser's tree above which it is replaced. */
  maxBrowserRssBytes: number;
  /** Aborted when the renderer closes: ends relaunch backoffs, and nothing new starts. */
  closed: AbortSignal;
  logger: Logger;
}

/** What the supervisor tells the pages' side. */
export interface SupervisorHooks {
  /** A browser went away (crashed, killed, cut off): what runs or waits on it ends with `reason`. */
  lost(instance: BrowserInstance, reason: AppError): void;
  /** `old` was replaced by the current browser: its idle pages go. */
  replaced(old: BrowserInstance): Promise<void>;
  /** A browser became current after a relaunch or a replacement: pages are made on it. */
  fill(): Promise<void>;
}

/** Reads of the renderers' sandbox after a launch, SANDBOX_READ_MS apart, until it is on. */
const SANDBOX_READS = 10;
const SANDBOX_READ_MS = 200;

export class BrowserSupervisor {
  readonly #options: SupervisorOptions;
  readonly #hooks: SupervisorHooks;
  readonly #logger: Logger;
  readonly #closed: AbortSignal;
  readonly #instances = new Set<BrowserInstance>();
  #current: BrowserInstance | null = null;
  /** The relaunch loop, while it runs: resolves with the browser that finally started. */
  #launching: Promise<BrowserInstance | null> | null = null;
  /** The launch attempt in progress, if any. */
  #attempt: Promise<BrowserInstance> | null = null;
  /** Launches that failed in a row, and the 503 that says when the next one is. */
  readonly #backoff = new RestartBackoff({
    firstMs: MIN_RELAUNCH_BACKOFF_MS,
    maxMs: MAX_RELAUNCH_BACKOFF_MS,
    attemptMs: RELAUNCH_ESTIMATE_MS,
  });
  #recycling = false;
  /** Whether the unsandboxed renderers were warned of (once per supervisor). */
  #sandboxWarned = false;
  #lastUsageCheck = 0;
  #restarts = 0;

  constructor(options: SupervisorOptions, hooks: SupervisorHooks) {
    this.#options = options;
    this.#hooks = hooks;
    this.#logger = options.logger;
    this.#closed = options.closed;
  }

  /** The browser new captures go to; null while none is running. */
  get current(): BrowserInstance | null {
    return this.#current;
  }

  /** A replacement is being launched (no spares are made meanwhile). */
  get recycling(): boolean {
    return this.#recycling;
  }

  /** A replacement or a relaunch is under way. */
  get changing(): boolean {
    return this.#recycling || this.#launching !== null;
  }

  /** Browsers replaced or relaunched so far. */
  get restarts(): number {
    return this.#restarts;
  }

  /**
   * Sweeps what earlier runs left and launches the first browser. One that cannot start does
   * not fail start(): the relaunch loop keeps trying in the background.
   */
  async start(): Promise<void> {
    await sweepStaleProfiles(this.#options.dataDir, this.#logger);
    const attempt = this.#launch();
    this.#attempt = attempt;
    try {
      this.#current = await attempt;
    } catch (err) {
      this.#launchFailed(err);
      void this.#relaunch();
    } finally {
      this.#attempt = null;
    }
  }

  /** The 503 for a capture that finds no browser; Retry-After points past the next launch. */
  unavailable(message: string): AppError {
    return this.#backoff.unavailable(message);
  }

  /**
   * The browser new captures go to. While a relaunch after a crash is under way, waits for that
   * attempt; once an attempt has failed (Chromium cannot start right now), refuses at once.
   */
  async instance(): Promise<BrowserInstance> {
    if (this.#closed.aborted) throw new AppError('overloaded', 'the renderer is shutting down');
    const current = this.#current;
    if (current?.connected) return current;
    if (this.#backoff.failures > 0) {
      throw this.unavailable('the browser is not available (restarting)');
    }
    if (this.#launching === null) void this.#relaunch();
    const attempt = this.#attempt;
    if (attempt === null) throw this.unavailable('the browser is not available (restarting)');
    try {
      return await attempt;
    } catch {
      throw this.unavailable('the browser is not available (restarting)');
    }
  }

  /** After a capture: a browser that served enough captures or grew too large is replaced. */
  checkHealth(): void {
    const current = this.#current;
    if (!current || this.#recycling || this.#launching) return;
    if (current.captures >= this.#options.browserRecycleAfter) {
      void this.recycle(`${current.captures} captures`);
      return;
    }
    const now = Date.now();
    if (now - this.#lastUsageCheck < USAGE_CHECK_INTERVAL_MS) return;
    this.#lastUsageCheck = now;
    const usage = current.usage();
    if (usage.anonBytes > this.#options.maxBrowserRssBytes) {
      void this.recycle(`memory: ${Math.round(usage.anonBytes / 2 ** 20)} MiB resident`);
    }
  }

  /** Launches a replacement, then moves new captures over; the old browser closes once unused. */
  async recycle(reason: string): Promise<void> {
    const old = this.#current;
    if (!old || this.#recycling || this.#closed.aborted) return;
    this.#recycling = true;
    this.#logger.info({ browser: old.id, reason }, 'replacing the browser');
    try {
      const fresh = await this.#launch();
      if (this.#closed.aborted) {
        await this.#retire(fresh);
        return;
      }
      old.draining = true;
      this.#current = fresh;
      this.#restarts++;
      this.#lastUsageCheck = Date.now();
      setTimeout(() => void this.#retire(old), DRAIN_TIMEOUT_MS).unref();
      await this.#hooks.replaced(old);
      await this.retireIfDrained(old);
      this.#recycling = false;
      await this.#hooks.fill().catch((err: unknown) => {
        this.#logger.warn({ err: String(err) }, 'could not prepare pages on the new browser');
      });
    } catch (err) {
      this.#logger.error(
        {
          err: String(err instanceof ChromiumLaunchError ? err.cause : err),
          ...(err instanceof ChromiumLaunchError ? err.report : {}),
        },
        'could not launch a replacement browser',
      );
    } finally {
      this.#recycling = false;
    }
  }

  /** A replaced browser is closed once no page of ours is left on it. */
  async retireIfDrained(instance: BrowserInstance): Promise<void> {
    if (instance !== this.#current && instance.pages === 0 && this.#instances.has(instance)) {
      await this.#retire(instance);
    }
  }

  /** At close, after `closed` aborted: the relaunch loop, if one runs, has ended. */
  async launchesEnded(): Promise<void> {
    await this.#launching?.catch(() => null);
  }

  /** At close: every browser closed (and every page with it). */
  async retireAll(): Promise<void> {
    this.#current = null;
    await Promise.all([...this.#instances].map((instance) => this.#retire(instance)));
  }

  #launchFailed(err: unknown, extra: Record<string, unknown> = {}): void {
    this.#logger.error(
      {
        err: String(err instanceof ChromiumLaunchError ? err.cause : err),
        executablePath: this.#options.executablePath,
        ...(err instanceof ChromiumLaunchError ? err.report : {}),
        ...extra,
      },
      'chromium could not be started',
    );
    this.#backoff.failed();
  }

  async #launch(): Promise<BrowserInstance> {
    const options = this.#options;
    const instance = await BrowserInstance.launch({
      executablePath: options.executablePath,
      dataDir: options.dataDir,
      ...(options.proxyUrl ? { proxyUrl: options.proxyUrl } : {}),
      maxMessageBytes: options.maxMessageBytes,
      logger: this.#logger,
    });
    this.#instances.add(instance);
    instance.browser.on('disconnected', () => this.#onDisconnected(instance));
    this.#logger.info({ pid: instance.pid, browser: instance.id }, 'chromium started');
    void this.#reportSandbox(instance);
    return instance;
  }

  /**
   * Measured, not assumed: what the kernel says of the browser's renderers (docs/security.md),
   * once they have had the moment a new renderer takes to start its sandbox.
   */
  async #reportSandbox(instance: BrowserInstance): Promise<void> {
    let sandbox = rendererSandbox(instance.pid);
    for (let i = 0; i < SANDBOX_READS && sandbox !== 'on' && !instance.closing; i++) {
      await sleep(SANDBOX_READ_MS, this.#closed).catch(noop);
      sandbox = rendererSandbox(instance.pid);
    }
    this.#logger.info({ pid: instance.pid, browser: instance.id, sandbox }, 'chromium sandbox');
    if (sandbox === 'off' && !this.#sandboxWarned) {
      this.#sandboxWarned = true;
      this.#logger.warn(
        { pid: instance.pid, uid: process.getuid?.() },
        "Chromium's renderers run without their sandbox: a renderer exploit would run with the service's own rights; run the service as an unprivileged user where user namespaces are allowed (docs/security.md)",
      );
    }
  }

  async #retire(instance: BrowserInstance): Promise<void> {
    this.#instances.delete(instance);
    if (this.#current === instance) this.#current = null;
    await instance.close();
  }

  #onDisconnected(instance: BrowserInstance): void {
    if (!this.#instances.has(instance) || instance.closing) return;
    // We cut the connection ourselves (a message over the bound): the browser is replaced
    // like a crashed one, and its captures are the same 503 (docs/security.md).
    const cut = instance.cutReason;
    void instance.exitReport(CRASH_EXIT_WAIT_MS).then((report) => {
      this.#logger.error(
        { browserPid: instance.pid, browser: instance.id, ...report },
        cut === null
          ? 'chromium disconnected (crashed or killed)'
          : `chromium sent ${cut}; replacing it`,
      );
    });
    this.#hooks.lost(
      instance,
      this.unavailable(
        cut === null
          ? 'the browser crashed; it is restarting'
          : 'the browser sent more than the service reads; it is restarting',
      ),
    );
    void this.#retire(instance);
    if (this.#closed.aborted || instance.draining) return;
    this.#restarts++;
    void this.#relaunch();
  }

  /**
   * Launches a browser after a crash or a failed launch, retrying with backoff until it works
   * or the renderer closes. The first attempt waits only when the last one failed. The
   * backoff counts failed launches only: every crash follows a launch that worked (which reset
   * it), and a failed replacement (recycle) is not counted; keep it so, or a crash would wait.
   */
  #relaunch(): Promise<BrowserInstance | null> {
    this.#launching ??= (async () => {
      while (!this.#closed.aborted) {
        const backoff = this.#backoff.delayMs();
        if (backoff > 0) {
          await sleep(backoff, this.#closed).catch(noop);
          if (this.#closed.aborted) break;
        }
        const attempt = this.#launch();
        this.#attempt = attempt;
        try {
          const instance = await attempt;
          if (this.#closed.aborted) {
            await this.#retire(instance);
            return null;
          }
          this.#current = instance;
          const failures = this.#backoff.failures;
          if (failures > 0) {
            this.#logger.info({ pid: instance.pid, attempts: failures + 1 }, 'chromium recovered');
          }
          this.#backoff.succeeded();
          void this.#hooks.fill().catch((err: unknown) => {
            this.#logger.warn({ err: String(err) }, 'could not prepare pages after a restart');
          });
          return instance;
        } catch (err) {
          this.#launchFailed(err, { attempt: this.#backoff.failures + 1 });
        } finally {
          this.#attempt = null;
        }
      }
      return null;
    })().finally(() => {
      this.#launching = null;
    });
    return this.#launching;
  }
}
