/** Compiles one filter list off the main thread (filter-lists.ts, compileInWorker). */
import { parentPort, workerData } from 'node:worker_threads';
import { compileList } from './filter-lists.ts';

const { text, cosmetic } = workerData as { text: string; cosmetic: boolean };
const bytes = compileList(text, cosmetic);
parentPort?.postMessage(bytes, [bytes.buffer as ArrayBuffer]);
