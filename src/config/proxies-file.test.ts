import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ProxyRoutes } from '../adapters/egress/proxy-routes.ts';
import { readProxiesFile } from './proxies-file.ts';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'proxies-file-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

const write = async (name: string, value: unknown): Promise<string> => {
  const file = join(dir, name);
  await writeFile(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
};

test('reads the operator proxies: ids, addresses, countries lower case, bypass, remote_dns', async () => {
  const file = await write('good.json', [
    { id: 'de-1', url: 'http://u:p%40ss@10.0.0.8:3128', countries: ['DE'] },
    {
      id: 'nl',
      url: 'socks5h://proxy.example:1080',
      remote_dns: true,
      bypass: ['*.Intra.example'],
    },
  ]);
  const { proxies, problems } = readProxiesFile(file);
  assert.deepEqual(problems, []);
  assert.equal(proxies.length, 2);
  assert.deepEqual(proxies[0]?.address, {
    scheme: 'http',
    host: '10.0.0.8',
    port: 3128,
    username: 'u',
    password: 'p@ss',
  });
  assert.deepEqual(proxies[0]?.countries, ['de']);
  assert.equal(proxies[1]?.remoteDns, true);
  assert.deepEqual(proxies[1]?.bypass, ['*.intra.example']);
});

test('names every bad entry, never its URL or password', async () => {
  const file = await write('bad.json', [
    { id: 'ok', url: 'http://127.0.0.1:3128' },
    { id: 'ok', url: 'http://127.0.0.1:3129' },
    { id: 'ftp', url: 'ftp://user:hunter2@127.0.0.1:21' },
    { id: 'path', url: 'http://user:hunter2@127.0.0.1:3128/x' },
    { id: 'c', url: 'http://127.0.0.1:1', countries: ['Germany'] },
    { id: 'x', url: 'http://127.0.0.1:1', extra: 1 },
    { id: '', url: 'http://127.0.0.1:1' },
    { id: 'ca', url: 'https://127.0.0.1:1', ca: join(dir, 'missing.pem') },
  ]);
  const { problems } = readProxiesFile(file);
  assert.equal(problems.length, 7, problems.join('\n'));
  assert.match(problems[0] ?? '', /entry 1 \("ok"\): the id is used twice/);
  assert.match(
    problems[1] ?? '',
    /entry 2 \("ftp"\): url must be an http, https, socks5 or socks5h URL/,
  );
  assert.match(problems[2] ?? '', /entry 3 \("path"\).*no path/);
  assert.match(problems[3] ?? '', /countries must be a list of ISO 3166-1 alpha-2 codes/);
  assert.match(problems[4] ?? '', /unknown field "extra"/);
  assert.match(problems[5] ?? '', /entry 6: id must be/);
  assert.match(problems[6] ?? '', /cannot read ca/);
  assert.ok(!problems.join('\n').includes('hunter2'));
  assert.match(
    readProxiesFile(await write('text.json', 'not json')).problems[0] ?? '',
    /PROXIES_FILE/,
  );
  assert.match(readProxiesFile(await write('obj.json', {})).problems[0] ?? '', /JSON list/);
});

test('a country is served by its proxies in turn; a caller URL is keyed by a digest', async () => {
  const file = await write('rr.json', [
    { id: 'a', url: 'http://127.0.0.1:1', countries: ['de'] },
    { id: 'b', url: 'http://127.0.0.1:2', countries: ['de', 'at'] },
  ]);
  const routes = new ProxyRoutes(readProxiesFile(file).proxies);
  const names = [1, 2, 3, 4].map(
    () => routes.routeFor({ kind: 'country', country: 'de' }).route.name,
  );
  assert.deepEqual(names, ['a', 'b', 'a', 'b']);
  assert.equal(routes.routeFor({ kind: 'country', country: 'at' }).route.name, 'b');
  const url = 'socks5://me:secret@203.0.113.7:1080';
  const own = routes.routeFor({ kind: 'url', url });
  assert.equal(own.route.judged, true);
  assert.ok(!own.key.includes('secret') && own.key.startsWith('url:'));
  assert.throws(() => routes.routeFor({ kind: 'operator', id: 'zz' }), /proxy "zz"/);
});
