import type { Renderer } from './types.ts';

/**
 * Starts the real renderer on first use (or on `warm()`), so processes that never capture
 * (the operator CLI, account-only tests) never launch a browser.
 */
export function lazyRenderer(
  start: () => Promise<Renderer>,
): Renderer & { warm(): Promise<Renderer>; started(): boolean } {
  let starting: Promise<Renderer> | undefined;
  let renderer: Renderer | undefined;
  let lastStartFailed = false;
  const warm = () => {
    starting ??= start().then(
      (r) => {
        renderer = r;
        lastStartFailed = false;
        return r;
      },
      (err) => {
        starting = undefined;
        lastStartFailed = true;
        throw err;
      },
    );
    return starting;
  };
  return {
    warm,
    started: () => renderer !== undefined,
    render: async (options, control) => (await warm()).render(options, control),
    stats: () => renderer?.stats() ?? { inUse: 0, queued: 0, restarts: 0, captures: 0 },
    // Not ready while the first launch runs or after it failed; a renderer nobody has asked
    // for yet (a process that never captures) is not a reason to refuse traffic.
    ready: () => (renderer ? renderer.ready() : starting === undefined && !lastStartFailed),
    close: async () => {
      if (starting) await (await starting.catch(() => undefined))?.close();
    },
  };
}
