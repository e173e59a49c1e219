import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownPage, markdownPolicy, SANITISER_CONFIG } from './markdown-page.ts';

/** The nonce of every script element of a page, in order. */
const nonces = (page: string): string[] =>
  [...page.matchAll(/<script nonce="([^"]+)">/g)].map((m) => m[1] ?? '');

test('the page carries the Markdown as a script literal nothing in it can close', () => {
  const source = '# Title *here* ##\n\n</script><script>alert(1)</script>\u2028';
  const page = markdownPage(source);
  assert.match(page, /<title>Title here<\/title>/);
  // One closing tag per script element the page itself has (marked, DOMPurify, the render).
  assert.equal(page.match(/<\/script>/gi)?.length, 3);
  assert.equal(page.match(/<script/gi)?.length, 3);
  const literal = /marked\.parse\(("(?:[^"\\]|\\.)*")/.exec(page)?.[1] ?? '';
  assert.equal(JSON.parse(literal), source);
  assert.match(page, /prefers-color-scheme: dark/);
  assert.doesNotMatch(page, /sourceMappingURL/);
});

test('the page lets only its own scripts run: a policy first, a fresh nonce on each script', () => {
  const page = markdownPage('# x');
  const [nonce, ...others] = nonces(page);
  assert.ok(nonce && nonce.length >= 24, 'a nonce of at least 18 random bytes');
  assert.deepEqual(others, [nonce, nonce]);
  // The policy is the first thing after the charset, before any element it governs.
  assert.ok(
    page.startsWith(
      '<!doctype html><html><head><meta charset="utf-8">' +
        `<meta http-equiv="Content-Security-Policy" content="${markdownPolicy(nonce)}">`,
    ),
  );
  assert.notEqual(nonces(markdownPage('# x'))[0], nonce, 'each page draws its own');
});

test('the policy: scripts by nonce only, nothing framed, embedded, fetched by script or based', () => {
  const directives = new Map(
    markdownPolicy('abc')
      .split('; ')
      .map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')] as const),
  );
  assert.equal(directives.get('default-src'), "'none'");
  assert.equal(directives.get('script-src'), "'nonce-abc'");
  // No fallback to default-src for these two: named.
  assert.equal(directives.get('base-uri'), "'none'");
  assert.equal(directives.get('form-action'), "'none'");
  // Inline CSS only (no stylesheet, no @import from anywhere); images and media load.
  assert.equal(directives.get('style-src'), "'unsafe-inline'");
  assert.equal(directives.get('img-src'), '* data:');
  for (const name of ['frame-src', 'child-src', 'object-src', 'connect-src', 'worker-src']) {
    assert.equal(directives.has(name), false, `${name} falls back to default-src 'none'`);
  }
});

test('the sanitiser: HTML and SVG profiles, less stylesheets, forms and SVG animation', () => {
  assert.deepEqual(SANITISER_CONFIG.USE_PROFILES, { html: true, svg: true, svgFilters: true });
  for (const tag of ['style', 'form', 'animatecolor', 'animatemotion', 'animatetransform']) {
    assert.ok((SANITISER_CONFIG.FORBID_TAGS as readonly string[]).includes(tag), tag);
  }
  assert.equal(SANITISER_CONFIG.RETURN_DOM_FRAGMENT, true);
  // The render, the page's last script: sanitised nodes go in, never markup to parse again.
  const render = (page: string) => page.slice(page.lastIndexOf('<script'));
  assert.match(render(markdownPage('x')), /DOMPurify\.sanitize\(html,/);
  assert.match(render(markdownPage('x')), /main\.replaceChildren\(nodes\)/);
  assert.doesNotMatch(render(markdownPage('x')), /innerHTML/);
  // The test seams: each layer can be left out, so a test shows the other holds alone.
  assert.match(render(markdownPage('x', { sanitise: false })), /main\.innerHTML=html/);
  assert.doesNotMatch(markdownPage('x', { policy: false }), /Content-Security-Policy/);
});

test('the title is found by a scan, in linear time on a hostile line', () => {
  const started = performance.now();
  const page = markdownPage(`# a${' '.repeat(262_000)}b`);
  assert.ok(performance.now() - started < 1_000);
  assert.match(page, /<title>a<\/title>/);
});
