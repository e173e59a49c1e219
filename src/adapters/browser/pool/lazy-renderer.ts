import type { Renderer } from '../../../domain/captures/renderer.ts';
import { AppError } from '../../../domain/errors.ts';
import { RestartBackoff } from './restart-backoff.ts';

/** A failed start is retried in the background after this, doubling... */
const FIRST_RETRY_MS = 1_000;
/** ...up to this. */
const MAX_RETRY_MS = 30_000;

export interface LazyRendererOptions {
  /** Told about every start that failed (the first and each background retry). */
  onStartFailed?: (err: unknown) => void;
}

/**
 * Starts the real renderer on first use (or on `warm()`), so processes that never capture
 * (the operator CLI, account-only tests) never launch a browser. A start that fails (no
 * Chromium binary, say) is retried in the background with backoff; meanwhile captures answer
 * 503 `overloaded` with Retry-After, never 500 (docs/security.md, "No browser, no 500"): the
 * answer of restart-backoff.ts, as for a browser that cannot launch.
 */
export interface LazyRenderer extends Renderer {
  /** Starts the real renderer now (it is otherwise started by the first render). */
  warm(): Promise<Renderer>;
  started(): boolean;
}

export function createLazyRenderer(
  options: LazyRendererOptions,
  start: () => Promise<Renderer>,
): LazyRenderer {
  let starting: Promise<Renderer> | undefined;
  let renderer: Renderer | undefined;
  const backoff = new RestartBackoff({ firstMs: FIRST_RETRY_MS, maxMs: MAX_RETRY_MS });
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;
  const warm = () => {
    if (closed) {
      return Promise.reject(new AppError('overloaded', 'the renderer is shutting down'));
    }
    clearTimeout(retryTimer);
    starting ??= start().then(
      (r) => {
        renderer = r;
        backoff.succeeded();
        return r;
      },
      (err) => {
        starting = undefined;
        const delay = backoff.failed();
        options.onStartFailed?.(err);
        if (!closed) {
          retryTimer = setTimeout(() => void warm().catch(() => {}), delay);
          retryTimer.unref();
        }
        throw err;
      },
    );
    return starting;
  };
  const unavailable = (cause?: unknown): AppError =>
    backoff.unavailable('the browser is not available', cause);
  return {
    warm,
    started: () => renderer !== undefined,
    render: async (renderOptions, control) => {
      let real = renderer;
      if (real === undefined) {
        // Between background retries, refuse at once rather than start again per capture.
        if (backoff.failures > 0 && starting === undefined) throw unavailable();
        try {
          real = await warm();
        } catch (err) {
          throw unavailable(err);
        }
      }
      return real.render(renderOptions, control);
    },
    stats: () => renderer?.stats() ?? { inUse: 0, queued: 0, restarts: 0, captures: 0 },
    // Not ready while the first launch runs or after it failed; a renderer nobody has asked
    // for yet (a process that never captures) is not a reason to refuse traffic.
    ready: () => (renderer ? renderer.ready() : starting === undefined && backoff.failures === 0),
    close: async () => {
      closed = true;
      clearTimeout(retryTimer);
      if (starting) await (await starting.catch(() => undefined))?.close();
    },
  };
}
