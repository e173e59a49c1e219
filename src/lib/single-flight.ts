/**
 * Identical work in flight at once runs once. Each caller joins with its own AbortSignal;
 * the shared work is aborted only when every caller has given up, so one caller's
 * cancellation (a revoked key) never fails the others.
 */
interface Flight<T> {
  promise: Promise<T>;
  controller: AbortController;
  waiters: number;
}

export class SingleFlight<T> {
  private readonly flights = new Map<string, Flight<T>>();

  get size(): number {
    return this.flights.size;
  }

  /** `leader` is true for the caller whose call started the work. */
  async run(
    key: string,
    signal: AbortSignal | undefined,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<{ value: T; leader: boolean }> {
    let flight = this.flights.get(key);
    const leader = flight === undefined;
    if (!flight) {
      const controller = new AbortController();
      const created: Flight<T> = {
        controller,
        waiters: 0,
        promise: Promise.resolve() as Promise<T>,
      };
      created.promise = (async () => work(controller.signal))().finally(() => {
        if (this.flights.get(key) === created) this.flights.delete(key);
      });
      // Keep an unobserved rejection from crashing the process when every waiter left.
      created.promise.catch(() => {});
      this.flights.set(key, created);
      flight = created;
    }
    const current = flight;
    current.waiters++;
    try {
      const value = await abortable(current.promise, signal);
      return { value, leader };
    } finally {
      current.waiters--;
      if (current.waiters === 0 && signal?.aborted) current.controller.abort(signal.reason);
    }
  }
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
