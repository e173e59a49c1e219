/**
 * Refreshes the shipped filter lists (assets/filter-lists/), by hand: the service itself never
 * downloads them. `npm run filter-lists:refresh` fetches EasyList and EasyPrivacy from
 * easylist.to; `-- --from DIR` copies `easylist.txt` and `easyprivacy.txt` from a directory
 * instead (Debian's webext-ublock-origin-chromium ships both under
 * /usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist). Each list is
 * checked (its header, its size, and that the engine compiles it) before anything is
 * replaced, and SNAPSHOT.json records where and when they came from with their sha256. The
 * next capture that blocks compiles the new lists (their hash names the cached engine).
 */
import { createHash } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  compileList,
  FILTER_LISTS_DIR,
  LISTS,
} from '../src/adapters/browser/page/network/filter-lists.ts';

const SOURCES: Readonly<Record<string, { url: string; title: string }>> = {
  'easylist.txt': { url: 'https://easylist.to/easylist/easylist.txt', title: 'EasyList' },
  'easyprivacy.txt': { url: 'https://easylist.to/easylist/easyprivacy.txt', title: 'EasyPrivacy' },
};
/** A real list is megabytes; less than this is an error page or a truncated download. */
const MIN_LIST_BYTES = 10_000;

export interface Snapshot {
  source: string;
  refreshed_at: string;
  files: Record<string, { sha256: string; lines: number; title: string }>;
}

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

async function fetchList(from: string | undefined, file: string): Promise<string> {
  if (from !== undefined) return readFile(path.join(from, file), 'utf8');
  const source = SOURCES[file];
  if (!source) throw new Error(`no source for ${file}`);
  const res = await fetch(source.url, { signal: AbortSignal.timeout(60_000) });
  if (!res.ok) throw new Error(`${source.url} answered ${res.status}`);
  return res.text();
}

/** Checks one list's text; throws naming what is wrong. */
export function checkList(file: string, text: string): void {
  const title = SOURCES[file]?.title;
  if (!text.startsWith('[Adblock Plus')) throw new Error(`${file}: not an Adblock Plus list`);
  if (!new RegExp(`^! Title: ${title}$`, 'm').test(text)) {
    throw new Error(`${file}: its title is not ${title}`);
  }
  if (text.length < MIN_LIST_BYTES) throw new Error(`${file}: only ${text.length} bytes`);
  const cosmetic = Object.values(LISTS).find((l) => l.file === file)?.cosmetic ?? false;
  compileList(text, cosmetic);
}

export async function refreshFilterLists(options: {
  from?: string;
  out?: string;
}): Promise<Snapshot> {
  const out = options.out ?? FILTER_LISTS_DIR;
  const files = Object.keys(SOURCES);
  const texts = await Promise.all(files.map((file) => fetchList(options.from, file)));
  for (const [i, file] of files.entries()) checkList(file, texts[i] as string);
  const snapshot: Snapshot = {
    source: options.from === undefined ? 'https://easylist.to/' : path.resolve(options.from),
    refreshed_at: new Date().toISOString(),
    files: Object.fromEntries(
      files.map((file, i) => {
        const text = texts[i] as string;
        const title = SOURCES[file]?.title ?? file;
        return [file, { sha256: sha256(text), lines: text.split('\n').length, title }];
      }),
    ),
  };
  // Every list is checked before any file is replaced; each replaced whole (rename).
  for (const [i, file] of files.entries()) {
    const target = path.join(out, file);
    await writeFile(`${target}.tmp`, texts[i] as string);
    await rename(`${target}.tmp`, target);
  }
  await writeFile(path.join(out, 'SNAPSHOT.json'), `${JSON.stringify(snapshot, null, 2)}\n`);
  return snapshot;
}

if (import.meta.main) {
  const { values } = parseArgs({
    options: { from: { type: 'string' }, out: { type: 'string' } },
  });
  refreshFilterLists({
    ...(values.from !== undefined ? { from: values.from } : {}),
    ...(values.out !== undefined ? { out: values.out } : {}),
  }).then(
    (s) => {
      for (const [file, f] of Object.entries(s.files)) {
        process.stdout.write(`${file}: ${f.lines} lines, sha256 ${f.sha256.slice(0, 16)}...\n`);
      }
    },
    (err: unknown) => {
      process.stderr.write(`refresh failed, nothing replaced: ${String(err)}\n`);
      process.exit(1);
    },
  );
}
