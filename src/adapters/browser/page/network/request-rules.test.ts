import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveCaptureOptions } from '../../../../domain/captures/capture-options.ts';
import { DEFAULT_PLANS } from '../../../../domain/plans.ts';
import { globMatcher, requestRulesFor, resourceKind, sameOrigin } from './request-rules.ts';

const optionsFor = (input: Record<string, unknown>, href = 'http://site.test/page') =>
  resolveCaptureOptions({ url: href, ...input }, new URL(href), DEFAULT_PLANS.pro).render;

test('globs match the whole URL, * standing for any characters', () => {
  const cases: [string, string, boolean][] = [
    ['*.png', 'http://a.test/x.png', true],
    ['*.png', 'http://a.test/x.png?v=1', false],
    ['*.png*', 'http://a.test/x.png?v=1', true],
    ['*://ads.test/*', 'https://ads.test/banner.js', true],
    ['*://ads.test/*', 'https://ads.test.evil/banner.js', false],
    ['http://a.test/exact', 'http://a.test/exact', true],
    ['http://a.test/exact', 'http://a.test/exactly', false],
    ['*/track*.js', 'http://a.test/static/tracker.js', true],
    ['*a*a*', 'http://x.test/a', false],
    ['*a*a*', 'http://x.test/aa', true],
    ['HTTP://A.TEST/*', 'http://a.test/b', true],
    ['*', 'anything', true],
    ['ab*ba', 'aba', false],
  ];
  for (const [pattern, url, expected] of cases) {
    assert.equal(globMatcher(pattern)(url), expected, `${pattern} on ${url}`);
  }
});

test('a hostile pattern stays fast on a long URL', () => {
  const pattern = `${'*a'.repeat(500)}*b`;
  const url = `http://x.test/${'a'.repeat(100_000)}`;
  const started = performance.now();
  assert.equal(globMatcher(pattern)(url), false);
  // Linear: far under a second even on a slow machine (a backtracking regex takes minutes).
  assert.ok(performance.now() - started < 5_000);
});

test('kinds: documents and preflights are never a kind; unknown types are other', () => {
  assert.equal(resourceKind('image'), 'image');
  assert.equal(resourceKind('websocket'), 'websocket');
  assert.equal(resourceKind('document'), null);
  assert.equal(resourceKind('preflight'), null);
  for (const t of ['ping', 'manifest', 'eventsource', 'texttrack', 'prefetch', 'other']) {
    assert.equal(resourceKind(t), 'other');
  }
});

test("the target's origin: same scheme, host and port, or its own https upgrade", () => {
  const http = new URL('http://site.test/page');
  assert.ok(sameOrigin(http, 'http://site.test/other'));
  assert.ok(sameOrigin(http, 'https://site.test/secure'));
  assert.ok(!sameOrigin(http, 'http://sub.site.test/'));
  assert.ok(!sameOrigin(http, 'http://site.test:8080/'));
  assert.ok(!sameOrigin(http, 'https://site.test:8443/'));
  const https = new URL('https://site.test/');
  assert.ok(!sameOrigin(https, 'http://site.test/'), 'never downgraded to http');
  const port = new URL('http://127.0.0.1:5000/');
  assert.ok(sameOrigin(port, 'http://127.0.0.1:5000/x'));
  assert.ok(!sameOrigin(port, 'http://127.0.0.1:5001/x'));
  assert.ok(!sameOrigin(port, 'not a url'));
});

test('no rules when no option needs them: requests are then not intercepted', () => {
  assert.equal(requestRulesFor(optionsFor({})), null);
  assert.notEqual(requestRulesFor(optionsFor({ headers: { 'X-A': '1' } })), null);
});

test('rules block by kind and pattern, never the page itself, and scope the headers', () => {
  const rules = requestRulesFor(
    optionsFor({
      block_resources: ['image'],
      block_requests: ['*/ads/*'],
      headers: { 'X-Token': 't' },
      http_auth: { username: 'u', password: 'p:w' },
    }),
  );
  assert.ok(rules);
  const req = (url: string, resourceType = 'script', mainDocument = false) =>
    rules.decide({ url, resourceType, mainDocument, sourceUrl: 'http://site.test/page' });
  assert.deepEqual(req('http://site.test/a.png', 'image'), { block: true });
  assert.deepEqual(req('http://cdn.test/ads/x.js'), { block: true });
  const own = { 'X-Token': 't', Authorization: `Basic ${btoa('u:p:w')}` };
  assert.deepEqual(req('http://site.test/ads/page', 'document', true), {
    block: false,
    headers: own,
  });
  assert.deepEqual(req('http://site.test/app.js'), { block: false, headers: own });
  assert.deepEqual(req('http://cdn.test/app.js'), { block: false, headers: null });
});
