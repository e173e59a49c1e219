import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownPage } from './markdown-page.ts';

test('the page carries the Markdown as a script literal nothing in it can close', () => {
  const source = '# Title *here* ##\n\n</script><script>alert(1)</script>\u2028';
  const page = markdownPage(source);
  assert.match(page, /<title>Title here<\/title>/);
  // One closing tag per script element the page itself has (marked's build, the render).
  assert.equal(page.match(/<\/script>/gi)?.length, 2);
  const literal = /marked\.parse\(("(?:[^"\\]|\\.)*")/.exec(page)?.[1] ?? '';
  assert.equal(JSON.parse(literal), source);
  assert.match(page, /prefers-color-scheme: dark/);
});

test('the title is found by a scan, in linear time on a hostile line', () => {
  const started = performance.now();
  const page = markdownPage(`# a${' '.repeat(262_000)}b`);
  assert.ok(performance.now() - started < 1_000);
  assert.match(page, /<title>a<\/title>/);
});
