import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { refreshFilterLists, sha256 } from '../../../../../scripts/refresh-filter-lists.ts';
import { silentLogger } from '../../../../lib/logger.ts';
import { createFilterLists, FILTER_LISTS_DIR, LISTS } from './filter-lists.ts';

const dirs: string[] = [];
const tempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'filter-lists-'));
  dirs.push(dir);
  return dir;
};
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const request = (url: string, resourceType = 'script') => ({
  url,
  resourceType,
  mainDocument: false,
  sourceUrl: 'https://news.example/article',
});

test('the shipped lists are the snapshot SNAPSHOT.json records', async () => {
  const snapshot = JSON.parse(await readFile(join(FILTER_LISTS_DIR, 'SNAPSHOT.json'), 'utf8'));
  for (const { file } of Object.values(LISTS)) {
    const text = await readFile(join(FILTER_LISTS_DIR, file), 'utf8');
    assert.equal(sha256(text), snapshot.files[file].sha256, file);
  }
  const names = await readdir(FILTER_LISTS_DIR);
  assert.ok(names.includes('LICENSE-GPL-3.txt') && names.includes('README.md'));
});

test('the lists are compiled once, cached, and a broken cache is rebuilt', async () => {
  const cacheDir = await tempDir();
  const lists = createFilterLists({ cacheDir, logger: silentLogger });
  const ads = await lists.get('ads');
  assert.equal(ads.matches(request('https://cdn.example/js/jquery.popunder.js')), true);
  assert.equal(ads.matches(request('https://news.example/js/app.js')), false);
  const trackers = await lists.get('trackers');
  assert.equal(trackers.matches(request('https://stats.example/piwik.js')), true);
  assert.match(
    ads.hidingStyles('https://news.example/', { classes: ['ad-slot'], ids: [], hrefs: [] }),
    /\.ad-slot/,
  );
  const cached = (await readdir(cacheDir)).sort();
  assert.deepEqual(
    cached.map((f) => f.replace(/-[0-9a-f]{32}\.bin$/, '')),
    ['ads', 'trackers'],
  );

  // Another process (a restart) loads the cached engines: same verdicts.
  const again = await createFilterLists({ cacheDir, logger: silentLogger }).get('ads');
  assert.equal(again.matches(request('https://cdn.example/js/jquery.popunder.js')), true);

  // A damaged cache file costs a rebuild, not a failure.
  await writeFile(join(cacheDir, cached[0] as string), 'not an engine');
  const rebuilt = await createFilterLists({ cacheDir, logger: silentLogger }).get('ads');
  assert.equal(rebuilt.matches(request('https://cdn.example/js/jquery.popunder.js')), true);
});

test('the refresh script checks every list before it replaces any', async () => {
  const from = await tempDir();
  const out = await tempDir();
  const shipped = (file: string) => readFile(join(FILTER_LISTS_DIR, file), 'utf8');
  await writeFile(join(from, 'easylist.txt'), await shipped('easylist.txt'));
  await writeFile(join(from, 'easyprivacy.txt'), '<html>503 Service Unavailable</html>');
  await writeFile(join(out, 'easylist.txt'), 'old');
  await assert.rejects(
    refreshFilterLists({ from, out }),
    /easyprivacy.txt: not an Adblock Plus list/,
  );
  assert.equal(await readFile(join(out, 'easylist.txt'), 'utf8'), 'old', 'nothing replaced');

  await writeFile(join(from, 'easyprivacy.txt'), await shipped('easyprivacy.txt'));
  const snapshot = await refreshFilterLists({ from, out });
  assert.equal(snapshot.files['easylist.txt']?.sha256, sha256(await shipped('easylist.txt')));
  assert.equal(
    await readFile(join(out, 'easyprivacy.txt'), 'utf8'),
    await shipped('easyprivacy.txt'),
  );
  assert.deepEqual(JSON.parse(await readFile(join(out, 'SNAPSHOT.json'), 'utf8')), snapshot);
});
