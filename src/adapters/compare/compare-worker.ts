/** Runs one comparison off the event loop (pixel-compare.ts, createImageComparer). */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { type CompareResult, type CompareTask, compareEncoded } from './pixel-compare.ts';

export async function compare(task: CompareTask): Promise<unknown> {
  const result = await compareEncoded(task);
  if (result.diff === null) return result;
  // The diff (megabytes at the pixel bound) goes back without a copy on the event loop: moved,
  // from a buffer of its own (sharp's may be external memory, which cannot be moved).
  const diff = new Uint8Array(result.diff);
  const value: CompareResult = { ...result, diff };
  return move({
    get [transferableSymbol]() {
      return [diff.buffer];
    },
    get [valueSymbol]() {
      return value;
    },
  } as never);
}
