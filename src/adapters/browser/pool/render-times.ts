/**
 * The node's typical render time: the median of its last successful renders (each timed from
 * the slot taken to the image made), for admission (slot-queue.ts: a render that would start
 * with less deadline left than this is refused at once). A median, so neither one page that
 * took its whole deadline nor a run of instant ones moves it far; successes only, since a
 * render that failed says nothing about how long one takes. Until `minSamples` renders have
 * succeeded it is 0: a node that has not rendered yet refuses nothing for time.
 */
export class RenderTimes {
  readonly #samples: number[] = [];
  readonly #size: number;
  readonly #minSamples: number;
  #next = 0;
  #typical = 0;

  constructor(options: { size: number; minSamples: number }) {
    this.#size = Math.max(1, options.size);
    this.#minSamples = Math.max(1, Math.min(options.minSamples, this.#size));
  }

  /** Records one successful render's duration, in ms. */
  add(ms: number): void {
    if (this.#samples.length < this.#size) this.#samples.push(ms);
    else this.#samples[this.#next] = ms;
    this.#next = (this.#next + 1) % this.#size;
    if (this.#samples.length < this.#minSamples) return;
    const sorted = this.#samples.toSorted((a, b) => a - b);
    const mid = sorted.length >> 1;
    this.#typical =
      sorted.length % 2 === 1
        ? (sorted[mid] as number)
        : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  }

  /** The median of the recent renders, in ms; 0 until enough have succeeded. */
  typical(): number {
    return this.#typical;
  }
}
