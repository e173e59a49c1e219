/**
 * The documentation site at /docs (src/http/docs-site.ts): every page served, every link and
 * image on it resolving (anchors included), the OpenAPI reference beside it; and the options
 * gallery's examples (docs/examples/examples.json) run against the service again, each
 * still making an image of the format and size it shows, so no example goes stale; and the
 * monitors page's before, after and diff images made again, the change still found.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  exampleApp,
  loadExamples,
  localRequest,
  type Made,
  runExample,
  startExampleSite,
} from '../scripts/docs-gallery.ts';
import { DOCUMENTED_MONITOR, makeMonitorImages } from '../scripts/docs-monitor-images.ts';
import { CAPTURE_OPTIONS } from '../src/domain/captures/capture-options.ts';
import { DOC_PAGES } from '../src/http/docs-site.ts';
import { startApp, type TestApp } from './helpers/app.ts';
import { type FixtureSite, imageSize } from './helpers/fixtures.ts';

const DOCS = path.resolve(import.meta.dirname, '..', 'docs');

describe('documentation site', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db: 'sqlite' });
  });
  after(() => t?.close());

  it('serves every page, and every link and image on them resolves', async () => {
    const pages = new Map<string, string>();
    for (const page of DOC_PAGES) {
      const href = page.slug === '' ? '/docs' : `/docs/${page.slug}`;
      const res = await t.fetch(href);
      assert.equal(res.status, 200, href);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      const html = await res.text();
      assert.match(html, /<nav aria-label="Documentation">/);
      pages.set(href, html);
    }
    const ids = (html: string) => new Set([...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    for (const [href, html] of pages) {
      assert.doesNotMatch(html, /href="[^"]*\.md(#[^"]*)?"/, `${href} links a .md file`);
      for (const [, target] of html.matchAll(/href="(\/[^"]*)"/g)) {
        const [where = '', anchor] = (target ?? '').split('#');
        if (!where.startsWith('/docs')) continue;
        const linked = pages.get(where) ?? (await (await t.fetch(where)).text());
        if (anchor)
          assert.ok(ids(linked).has(anchor), `${href} links ${target}, which has no such anchor`);
        else assert.equal((await t.fetch(where)).status, 200, `${href} links ${target}`);
      }
      for (const [, src] of html.matchAll(/<img src="([^"]+)"/g)) {
        const res = await t.fetch(src ?? '');
        assert.equal(res.status, 200, `${href}: ${src}`);
        assert.match(res.headers.get('content-type') ?? '', /^image\//);
      }
    }
    assert.match(await (await t.fetch('/docs/site.css')).text(), /--accent/);
    const reference = await t.fetch('/docs/api/');
    assert.equal(reference.status, 200);
    assert.match(await reference.text(), /swagger/i);
  });

  it('serves the MCP server page, with a host configuration and every tool', async () => {
    const res = await t.fetch('/docs/mcp');
    assert.equal(res.status, 200);
    const html = await res.text();
    assert.match(html, /<a [^>]*href="\/docs\/mcp"[^>]*>MCP server<\/a>/, 'in the navigation');
    assert.match(html, /claude_desktop_config\.json/);
    assert.match(html, /\.vscode\/mcp\.json/);
    for (const tool of [
      'capture_screenshot',
      'capture_element',
      'list_devices',
      'list_proxies',
      'list_storage_destinations',
      'get_usage',
      'create_monitor',
      'list_monitor_changes',
    ]) {
      assert.match(html, new RegExp(`<code>${tool}</code>`), tool);
    }
  });

  it('has an example for every capture option', async () => {
    const options = await readFile(path.join(DOCS, 'options.md'), 'utf8');
    for (const option of CAPTURE_OPTIONS) {
      assert.ok(
        options.includes(`\`${option.name}\``) || options.includes(`"${option.name}"`),
        `options.md shows ${option.name}`,
      );
    }
  });
});

describe('documentation examples still make what they show', () => {
  let site: FixtureSite;
  let app: Awaited<ReturnType<typeof exampleApp>>;
  before(async () => {
    site = await startExampleSite();
    app = await exampleApp(site);
  });
  after(async () => {
    await app?.t.close();
    await site?.close();
  });

  it('runs every request of the options gallery', async () => {
    const { site: documented, examples } = await loadExamples();
    const shown = JSON.parse(
      await readFile(path.join(DOCS, 'images', 'options.json'), 'utf8'),
    ) as Made[];
    assert.deepEqual(
      shown.map((m) => m.name),
      examples.map((e) => e.name),
      'options.json is the gallery of examples.json',
    );
    for (const [i, example] of examples.entries()) {
      const expected = shown[i] as Made;
      const { made } = await runExample(
        app.t,
        app.key,
        localRequest(example, documented, site.origin),
      );
      assert.deepEqual({ name: example.name, ...made }, expected, example.name);
      const ext = expected.format === 'jpeg' ? 'jpg' : expected.format;
      const committed = await readFile(path.join(DOCS, 'images', `options-${example.name}.${ext}`));
      assert.deepEqual(imageSize(committed), made, `${example.name}: the committed image`);
    }
  });
});

describe('the monitors page still shows what a monitor finds', () => {
  it('makes its before, after and diff images again, of the committed sizes', async () => {
    const doc = await readFile(path.join(DOCS, 'monitors.md'), 'utf8');
    // The page documents the monitor the script creates.
    for (const fragment of [
      `"url": "${DOCUMENTED_MONITOR.url}"`,
      `"every": "${DOCUMENTED_MONITOR.every}"`,
      `"threshold": ${DOCUMENTED_MONITOR.threshold}`,
      `"ignore_selectors": ["${DOCUMENTED_MONITOR.ignore_selectors[0]}"]`,
      `"width": ${DOCUMENTED_MONITOR.options.width}, "height": ${DOCUMENTED_MONITOR.options.height}`,
    ]) {
      assert.ok(doc.includes(fragment), `monitors.md shows ${fragment}`);
    }
    const shown = JSON.parse(await readFile(path.join(DOCS, 'images', 'monitor.json'), 'utf8')) as {
      width: number;
      height: number;
      changed_fraction: number;
    };
    const made = await makeMonitorImages();
    const [first, second] = made.runs;
    assert.deepEqual([first.changed, second.changed], [false, true]);
    assert.ok(
      Math.abs((second.changed_fraction ?? 0) - shown.changed_fraction) < 0.02,
      `changed ${second.changed_fraction}, the page shows ${shown.changed_fraction}`,
    );
    assert.match(doc, new RegExp(`about ${Math.round(shown.changed_fraction * 100)} %`));
    for (const name of ['before', 'after', 'diff'] as const) {
      const size = { format: 'png', width: shown.width, height: shown.height };
      assert.deepEqual(imageSize(made[name]), size, `${name}: made again`);
      const committed = await readFile(path.join(DOCS, 'images', `monitor-${name}.png`));
      assert.deepEqual(imageSize(committed), size, `${name}: the committed image`);
    }
  });
});
