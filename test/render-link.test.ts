/**
 * The canonical query and signature of render links, against the vector in docs/api.md
 * ("Signed render links"): the doc's text is read, so the doc and the code cannot drift. The
 * vector itself was checked with `openssl dgst -sha256 -hmac` and with Python's urllib.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import {
  canonicalQuery,
  encodeRfc3986,
  parseQuery,
  type QueryPair,
  signedQueryString,
  signQuery,
} from '../src/lib/signed-query.ts';

async function docVector(): Promise<{
  secret: string;
  pairs: QueryPair[];
  canonical: string;
  signature: string;
}> {
  const doc = await readFile(new URL('../docs/api.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Signed render links'));
  const secret = /Signing secret\s+`(sig_live_[0-9A-Za-z]+)`/.exec(section)?.[1];
  const blocks = [...section.matchAll(/```text\n([\s\S]*?)\n```/g)].map((m) => m[1] ?? '');
  const [params, canonical, signature] = blocks;
  assert.ok(secret && params && canonical && signature, 'the vector is in docs/api.md');
  const pairs = params.split('\n').map((line): QueryPair => {
    const eq = line.indexOf('=');
    return [line.slice(0, eq), line.slice(eq + 1)];
  });
  return { secret, pairs, canonical, signature };
}

test('the canonical query and signature match the documented vector', async () => {
  const v = await docVector();
  assert.equal(v.pairs.length, 7);
  assert.equal(canonicalQuery(v.pairs), v.canonical);
  assert.equal(signQuery(v.secret, v.pairs), v.signature);
  // Order of the parameters in the link does not matter; a signature parameter is left out.
  const shuffled = [...v.pairs].reverse();
  assert.equal(signQuery(v.secret, [...shuffled, ['signature', 'ignored']]), v.signature);
  // A link built from them parses back to the same pairs and signs the same.
  const parsed = parseQuery(signedQueryString(v.secret, v.pairs));
  assert.deepEqual(parsed.slice(0, -1), v.pairs);
  assert.deepEqual(parsed.at(-1), ['signature', v.signature]);
});

test('RFC 3986 encoding: unreserved characters stay, everything else is %XX in upper case', () => {
  assert.equal(
    encodeRfc3986("AZaz09-._~ !'()*/?#&=+é😀"),
    'AZaz09-._~%20%21%27%28%29%2A%2F%3F%23%26%3D%2B%C3%A9%F0%9F%98%80',
  );
});

test('reading a query: + is a space, %2B a plus, bad escapes refused, empty pieces skipped', () => {
  assert.deepEqual(parseQuery('a=x+y&b=x%2By&&c&d='), [
    ['a', 'x y'],
    ['b', 'x+y'],
    ['c', ''],
    ['d', ''],
  ]);
  assert.throws(() => parseQuery('a=%E0%A4%A'), /not valid percent-encoded UTF-8/);
  assert.throws(() => parseQuery('a=%ED%A0%80'), /not valid percent-encoded UTF-8/);
});

test('pairs sort by encoded name, then encoded value, in byte order', () => {
  const pairs: QueryPair[] = [
    ['b', '2'],
    ['a', 'z'],
    ['a', 'Z'],
    ['a', '~'],
    ['A', '1'],
    ['a_b', '1'],
  ];
  assert.equal(canonicalQuery(pairs), 'A=1&a=Z&a=z&a=~&a_b=1&b=2');
  // A changed value, a moved value between names, or a dropped repeat changes the signature.
  const base = signQuery('sig_live_x', pairs);
  assert.notEqual(signQuery('sig_live_x', [...pairs.slice(0, 5)]), base);
  assert.notEqual(signQuery('sig_live_x', [['b', '2a'], ...pairs.slice(1)]), base);
  assert.notEqual(signQuery('sig_live_y', pairs), base);
});
