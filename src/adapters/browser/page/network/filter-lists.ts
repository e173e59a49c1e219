/**
 * The filter lists behind `block_ads` (EasyList) and `block_trackers` (EasyPrivacy), shipped
 * in `assets/filter-lists/` (their sources, dates and licence are in its README) and matched by
 * Ghostery's adblocker engine. Nothing is downloaded: the engine is compiled from the shipped
 * text on first use, in a worker thread (about a second of parsing that would otherwise stall
 * every request of the process), and kept serialised under the data directory, named by a hash
 * of the list text and the engine's version, so a later start loads it in milliseconds and a
 * new list or engine builds a new one.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { FiltersEngine, Request, type RequestType } from '@ghostery/adblocker';
import type { Logger } from '../../../../lib/logger.ts';
import type { InterceptedRequest, RequestMatcher } from './request-rules.ts';

export const FILTER_LISTS_DIR = resolve(
  import.meta.dirname,
  '..',
  '..',
  '..',
  '..',
  '..',
  'assets',
  'filter-lists',
);

export type ListName = 'ads' | 'trackers';

/** Each list's file, and whether its element-hiding rules are kept (EasyList's hide ad boxes). */
export const LISTS: Readonly<Record<ListName, { file: string; cosmetic: boolean }>> = {
  ads: { file: 'easylist.txt', cosmetic: true },
  trackers: { file: 'easyprivacy.txt', cosmetic: false },
};

const ENGINE_VERSION: string = (
  createRequire(import.meta.url)('@ghostery/adblocker/package.json') as { version: string }
).version;

export interface FilterList {
  /** Whether the list blocks this request. */
  matches: RequestMatcher;
  /**
   * CSS hiding the elements the list's cosmetic rules name for a page at `url` with these
   * classes, ids and link targets ('' when none).
   */
  hidingStyles(url: string, dom: { classes: string[]; ids: string[]; hrefs: string[] }): string;
}

export interface FilterLists {
  get(name: ListName): Promise<FilterList>;
}

/** Parses a list's text into a serialised engine (run in a worker: see filter-lists-worker.ts). */
export function compileList(text: string, cosmetic: boolean): Uint8Array {
  return FiltersEngine.parse(text, {
    loadNetworkFilters: true,
    loadCosmeticFilters: cosmetic,
    loadGenericCosmeticsFilters: cosmetic,
    // Scriptlets and HTML filtering would run the list's code in the page: not used.
    loadExtendedSelectors: false,
    enableHtmlFiltering: false,
  }).serialize();
}

function compileInWorker(text: string, cosmetic: boolean): Promise<Uint8Array> {
  return new Promise((done, fail) => {
    const worker = new Worker(new URL('./filter-lists-worker.ts', import.meta.url), {
      workerData: { text, cosmetic },
    });
    worker.once('message', (bytes: Uint8Array) => done(bytes));
    worker.once('error', fail);
    worker.once('exit', (code) => fail(new Error(`filter list worker exited with ${code}`)));
  });
}

function asFilterList(engine: FiltersEngine): FilterList {
  return {
    matches: (r: InterceptedRequest) =>
      engine.match(
        Request.fromRawDetails({
          url: r.url,
          sourceUrl: r.sourceUrl,
          type: r.resourceType as RequestType,
        }),
      ).match,
    hidingStyles(url, dom) {
      const { hostname } = new URL(url);
      const { styles } = engine.getCosmeticsFilters({
        url,
        hostname,
        domain: Request.fromRawDetails({ url }).domain,
        ...dom,
        getBaseRules: true,
        getInjectionRules: false,
        getExtendedRules: false,
        getRulesFromDOM: true,
        getRulesFromHostname: true,
      });
      return styles;
    },
  };
}

/**
 * The lists, each built or loaded once per process on first use. `cacheDir` holds the
 * serialised engines; a cache that cannot be read or written only costs a rebuild.
 */
export function createFilterLists(options: {
  cacheDir: string;
  listsDir?: string;
  logger: Logger;
}): FilterLists {
  const loading = new Map<ListName, Promise<FilterList>>();
  const load = async (name: ListName): Promise<FilterList> => {
    const { file, cosmetic } = LISTS[name];
    const text = await readFile(join(options.listsDir ?? FILTER_LISTS_DIR, file), 'utf8');
    const hash = createHash('sha256')
      .update(`${ENGINE_VERSION}\0${cosmetic}\0`)
      .update(text)
      .digest('hex')
      .slice(0, 32);
    const cached = join(options.cacheDir, `${name}-${hash}.bin`);
    try {
      return asFilterList(FiltersEngine.deserialize(new Uint8Array(await readFile(cached))));
    } catch {
      // Not built yet (or unreadable): built below.
    }
    const started = performance.now();
    const bytes = await compileInWorker(text, cosmetic);
    const engine = FiltersEngine.deserialize(bytes);
    options.logger.info(
      { list: file, ms: Math.round(performance.now() - started), bytes: bytes.length },
      'filter list compiled',
    );
    try {
      await mkdir(options.cacheDir, { recursive: true, mode: 0o700 });
      const temp = `${cached}.${process.pid}.tmp`;
      await writeFile(temp, bytes, { mode: 0o600 });
      await rename(temp, cached);
    } catch (err) {
      options.logger.warn({ err: String(err) }, 'filter list cache not written');
    }
    return asFilterList(engine);
  };
  return {
    get(name) {
      let list = loading.get(name);
      if (!list) {
        list = load(name);
        loading.set(name, list);
        // A failure is not kept: the next capture that asks tries again.
        list.catch(() => loading.delete(name));
      }
      return list;
    },
  };
}
