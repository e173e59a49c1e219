/**
 * The one "browser unavailable, retry later" answer, and the backoff it counts from. Two
 * things start again after a failure: the renderer as a whole (lazy-renderer.ts: no Chromium
 * binary, no egress proxy) and a Chromium that would not launch or went away
 * (browser-supervisor.ts). Each waits longer after each failure in a row, doubling up to a
 * cap, and meanwhile a capture is 503 `overloaded` with a Retry-After that points past the
 * next attempt, never a 500 (docs/security.md, "No browser, no 500").
 */
import { AppError } from '../../../domain/errors.ts';

/** Retry-After says at most this. */
const MAX_RETRY_AFTER_SECONDS = 30;

export interface RestartBackoffOptions {
  /** The wait after the first failure, doubling with each one more in a row... */
  firstMs: number;
  /** ...up to this. */
  maxMs: number;
  /** What an attempt itself usually takes, added to Retry-After. */
  attemptMs?: number;
}

export class RestartBackoff {
  readonly #firstMs: number;
  readonly #maxMs: number;
  readonly #attemptMs: number;
  #failures = 0;
  /** When the next attempt starts (epoch ms), set by the last failure. */
  #retryAt = 0;

  constructor(options: RestartBackoffOptions) {
    this.#firstMs = options.firstMs;
    this.#maxMs = options.maxMs;
    this.#attemptMs = options.attemptMs ?? 0;
  }

  /** Attempts that failed in a row (0: the last one worked, or none was made). */
  get failures(): number {
    return this.#failures;
  }

  /** The wait before the next attempt: 0 until one has failed. */
  delayMs(): number {
    if (this.#failures === 0) return 0;
    return Math.min(this.#maxMs, this.#firstMs * 2 ** (this.#failures - 1));
  }

  /** Counts a failed attempt; the wait before the next one (Retry-After counts to its end). */
  failed(): number {
    this.#failures++;
    const delay = this.delayMs();
    this.#retryAt = Date.now() + delay;
    return delay;
  }

  /** An attempt worked: the next failure waits the first delay again. */
  succeeded(): void {
    this.#failures = 0;
  }

  /** The 503 for a capture that finds no browser, Retry-After past the next attempt. */
  unavailable(message: string, cause?: unknown): AppError {
    const wait = Math.max(0, this.#retryAt - Date.now()) + this.#attemptMs;
    const seconds = Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(1, Math.ceil(wait / 1000)));
    return new AppError('overloaded', message, {
      headers: { 'Retry-After': String(seconds) },
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
