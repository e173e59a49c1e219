/**
 * The one contract every part of the service plugs in through (ARCHITECTURE.md, "Parts"):
 * what it gives the parts built after it, and what the node's life asks of it: a readiness
 * check for GET /readyz, shutdown's first step (take no more work) and its close. The
 * composition root (deps.ts) builds parts in order and hands each to a `PartList`.
 */
import type { ReadinessCheck } from '../http/types.ts';

export interface Part<T> {
  /** What the part gives: ports, contexts, or the tasks a timer runs. */
  gives: T;
  /** Asked by GET /readyz; a part that can be down names itself here. */
  ready?: ReadinessCheck;
  /** Shutdown's first step: take no more work, let go of what would not be finished. */
  stopTaking?(): Promise<void>;
  /** Closes what the part opened; a part that opened nothing has none. */
  close?(): Promise<void>;
}

/**
 * The parts of one node, in the order they were built: readiness checks in that order,
 * stop-taking-work and closes in reverse, so a part stops before those it was built on.
 */
export class PartList {
  readonly #parts: Array<Part<unknown>> = [];

  /** Takes a built part and hands back what it gives. */
  add<T>(part: Part<T>): T {
    this.#parts.push(part);
    return part.gives;
  }

  readiness(): ReadinessCheck[] {
    return this.#parts.flatMap((part) => (part.ready ? [part.ready] : []));
  }

  async stopTaking(): Promise<void> {
    for (const part of this.#parts.toReversed()) await part.stopTaking?.();
  }

  /** Every close is tried: one that fails does not keep the others open. */
  async close(): Promise<void> {
    for (const part of this.#parts.toReversed()) await part.close?.().catch(() => {});
  }
}

/**
 * Runs the rest of a part's build after it has opened `opened`; when that throws, closes it
 * and throws on, so a part that failed half-way leaves nothing open.
 */
export async function closeOnFailure<T>(
  close: () => Promise<void>,
  build: () => Promise<T>,
): Promise<T> {
  try {
    return await build();
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
