/**
 * The dashboard's link builder (web/src/shared/signed-link.ts, WebCrypto) signs exactly as the
 * server checks (src/lib/signed-query.ts): the same canonical text and signature for links
 * with every kind of character, and the documented vector.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalQuery, parseQuery, type QueryPair, signQuery } from '../src/lib/signed-query.ts';
import {
  buildRenderLink,
  canonicalLinkQuery,
  linkSignature,
} from '../web/src/shared/signed-link.ts';

const SECRET = 'sig_live_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg';

test('the browser signer agrees with the server on awkward values', async () => {
  const cases: QueryPair[][] = [
    [
      ['url', 'https://example.com/?q=a+b&r=ü 😀'],
      ['format', 'png'],
    ],
    [
      ['hide_selectors', '#a'],
      ['hide_selectors', '.b c'],
      ['hide_selectors', "[data-x='1']"],
    ],
    [
      ['user_agent', "Mozilla/5.0 (X11; Linux) !*'()~"],
      ['url', 'http://x/%41'],
    ],
    [],
  ];
  for (const pairs of cases) {
    assert.equal(canonicalLinkQuery(pairs), canonicalQuery(pairs));
    assert.equal(await linkSignature(SECRET, pairs), signQuery(SECRET, pairs));
  }
  assert.equal(
    await linkSignature(SECRET, [
      ['expires', '1767225600'],
      ['format', 'webp'],
    ]),
    signQuery(SECRET, [
      ['format', 'webp'],
      ['expires', '1767225600'],
    ]),
  );
});

test('a built link parses back, on the server, to what was signed', async () => {
  const link = await buildRenderLink({
    base: 'http://localhost:8080',
    secret: SECRET,
    keyId: 7,
    expires: 1767225600,
    params: [['url', 'https://example.com/a b?c=d&e=+']],
  });
  const query = link.slice(link.indexOf('?') + 1);
  assert.ok(link.startsWith('http://localhost:8080/v1/render?'));
  const pairs = parseQuery(query);
  const signature = pairs.at(-1);
  assert.equal(signature?.[0], 'signature');
  assert.equal(signQuery(SECRET, pairs), signature?.[1]);
  assert.deepEqual(pairs[0], ['url', 'https://example.com/a b?c=d&e=+']);
});
