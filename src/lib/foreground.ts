/**
 * This node's synchronous renders in flight, and a wait for a quiet moment among them
 * (docs/deployment.md, "Async captures"): queued work (async captures, batches, monitor runs)
 * starts a render once no synchronous render has run for `quietMs`, or after `maxWaitMs`
 * whatever happens, so a node kept busy by callers who are waiting still drains its queue. On
 * a machine of few cores two renders at once each take twice as long: the caller who waits
 * should not be the one who pays for the queue.
 */
export class ForegroundRenders {
  #inFlight = 0;
  #lastEnd = Number.NEGATIVE_INFINITY;
  readonly #now: () => number;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Synchronous renders running now. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** A synchronous render starts; call what it returns when it ends (once). */
  enter(): () => void {
    this.#inFlight++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#inFlight--;
      this.#lastEnd = this.#now();
    };
  }

  /** True when no synchronous render runs and none ended within `quietMs`. */
  isQuiet(quietMs: number): boolean {
    return this.#inFlight === 0 && this.#now() - this.#lastEnd >= quietMs;
  }

  /**
   * Resolves at the first quiet moment, or after `maxWaitMs`; rejects with the signal's reason
   * when it aborts first. Polls every `pollMs` (a handful of timers, only while work waits).
   */
  async quiet(options: {
    quietMs: number;
    maxWaitMs: number;
    pollMs?: number;
    signal?: AbortSignal;
  }): Promise<void> {
    const end = this.#now() + options.maxWaitMs;
    const poll = options.pollMs ?? 50;
    while (!this.isQuiet(options.quietMs) && this.#now() < end) {
      options.signal?.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, poll).unref());
    }
    options.signal?.throwIfAborted();
  }
}
