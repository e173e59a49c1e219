/**
 * The page's content with its image (`content`; docs/api.md, "The page's content") through
 * the HTTP surface, on SQLite and PostgreSQL: the DOM as the page left it (not its source),
 * its visible text, its Markdown with a GitHub-flavoured table; hosted beside the image, under
 * a policy that keeps the page's HTML from running on the service's origin; answered again by
 * a cache hit; cut at 5 MiB on a character's boundary; gone with its record; refusals.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

const ARTICLE = page(
  '<h1>Quarterly report</h1><p>Revenue grew <strong>12%</strong>.</p>' +
    '<p style="display:none">a hidden note</p>' +
    '<table><thead><tr><th>Region</th><th>Sales</th></tr></thead>' +
    '<tbody><tr><td>North</td><td>40</td></tr><tr><td>South</td><td>60</td></tr></tbody></table>' +
    '<ul><li><input type="checkbox" checked> shipped</li></ul>' +
    "<script>const p = document.createElement('p'); p.id = 'added';" +
    "p.textContent = 'written by script'; document.body.append(p);</script>",
  '<title>Report</title>',
);

/** 3 MiB of two-byte characters, so the 5 MiB cut falls inside one. */
const LONG = page(`<p>${'é'.repeat(3 * 2 ** 20)}</p>`);

describeEachDatabase("the page's content with its image", (db) => {
  let t: TestApp;
  let site: FixtureSite;
  let pro = '';

  before(async () => {
    site = await startSite({ '/article': ARTICLE, '/long': LONG });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { pro: { rate_per_minute: 1000 } },
    });
    pro = await newApiKey(t, { plan: 'pro' });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const post = (json: Record<string, unknown>) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { width: 800, height: 600, ...json },
      headers: { 'x-api-key': pro },
    });

  async function captured(json: Record<string, unknown>): Promise<CaptureAnswer> {
    const res = await post(json);
    const text = await res.text();
    assert.equal(res.status, 201, text);
    return JSON.parse(text) as CaptureAnswer;
  }

  it('stores the DOM, the visible text and the Markdown, each hosted beside the image', async () => {
    const answer = await captured({
      url: `${site.origin}/article`,
      content: ['markdown', 'html', 'text'],
    });
    assert.deepEqual(Object.keys(answer.content ?? {}), ['html', 'text', 'markdown']);
    assert.equal(answer.content_truncated, false);
    const token = answer.image_url.slice(answer.image_url.lastIndexOf('/') + 1, -'.png'.length);
    for (const [kind, ext] of [
      ['html', 'html'],
      ['text', 'txt'],
      ['markdown', 'md'],
    ] as const) {
      assert.equal(answer.content?.[kind], `${t.url}/images/${token}.${ext}`);
    }

    const html = await fetch(String(answer.content?.html));
    assert.equal(html.status, 200);
    assert.equal(html.headers.get('content-type'), 'text/html; charset=utf-8');
    // The page's HTML never runs on the service's origin, nor loads anything.
    assert.equal(html.headers.get('content-security-policy'), "sandbox; default-src 'none'");
    assert.equal(html.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(html.headers.get('content-disposition'), 'attachment');
    const dom = await html.text();
    assert.match(dom, /^<!DOCTYPE html>\n<html>/);
    assert.match(dom, /<p id="added">written by script<\/p>/, 'the DOM, not the source');

    const text = await (await fetch(String(answer.content?.text))).text();
    assert.match(text, /Quarterly report/);
    assert.match(text, /Revenue grew 12%\./);
    assert.match(text, /written by script/);
    assert.doesNotMatch(text, /a hidden note/, 'visible text only');
    assert.doesNotMatch(text, /createElement/);

    const md = await fetch(String(answer.content?.markdown));
    assert.equal(md.headers.get('content-type'), 'text/markdown; charset=utf-8');
    const markdown = await md.text();
    assert.match(markdown, /^# Quarterly report$/m);
    assert.match(markdown, /Revenue grew \*\*12%\*\*\./);
    assert.match(markdown, /\| Region \| Sales \|/);
    assert.match(markdown, /\| North \| 40 +\|/);
    assert.match(markdown, /^- +\[x\] +shipped$/m);
    assert.doesNotMatch(markdown, /a hidden note/, 'what the page shows');
    assert.doesNotMatch(markdown, /createElement/);

    // A cache hit answers the same files; another set of kinds is another entry.
    const again = await captured({
      url: `${site.origin}/article`,
      content: ['text', 'html', 'markdown'],
    });
    assert.equal(again.cached, true);
    assert.deepEqual(again.content, answer.content);
    const other = await captured({ url: `${site.origin}/article`, content: ['text'] });
    assert.equal(other.cached, false);
    assert.deepEqual(Object.keys(other.content ?? {}), ['text']);
    // An image's other extensions are not its content.
    const bare = await captured({ url: `${site.origin}/article` });
    assert.equal(bare.content, undefined);
    const bareToken = bare.image_url.slice(bare.image_url.lastIndexOf('/') + 1, -'.png'.length);
    assert.equal((await fetch(`${t.url}/images/${bareToken}.txt`)).status, 404);

    // Deleted with its record (Pro records carry an id).
    const del = await t.fetch(`/v1/screenshots/${answer.id}`, {
      method: 'DELETE',
      headers: { 'x-api-key': pro },
    });
    assert.equal(del.status, 200, await del.text());
    for (const url of Object.values(answer.content ?? {})) {
      assert.equal((await fetch(url)).status, 404, url);
    }
    assert.equal(await t.deps.storage.get(`${token}.md`), null);
  });

  it('cuts each file at 5 MiB on a character boundary, and says so', async () => {
    const answer = await captured({ url: `${site.origin}/long`, content: ['text', 'html'] });
    assert.equal(answer.content_truncated, true);
    for (const url of Object.values(answer.content ?? {})) {
      const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
      assert.ok(bytes.length <= 5 * 2 ** 20 && bytes.length > 5 * 2 ** 20 - 4, `${bytes.length}`);
      // Whole characters only: the decoder finds no broken sequence at the end.
      assert.doesNotThrow(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    }
  });

  it('reads a document capture too, and refuses what is not a kind', async () => {
    const answer = await captured({
      markdown: '# Notes\n\n| a | b |\n|---|---|\n| 1 | 2 |',
      content: ['markdown'],
    });
    const md = await (await fetch(String(answer.content?.markdown))).text();
    assert.match(md, /^# Notes$/m);
    assert.match(md, /\| a +\| b +\|/);
    for (const content of [['pdf'], ['text', 'text'], 'text']) {
      const res = await post({ url: `${site.origin}/article`, content });
      const body = (await res.json()) as { error: string; code: string };
      assert.equal(res.status, 400, JSON.stringify(content));
      assert.match(body.error, /content/);
    }
  });
});
