/**
 * HTML and Markdown in place of a URL (docs/api.md, "HTML and Markdown") through the HTTP
 * surface: the document's pixels, Markdown's stylesheet in light and dark, `base_url` for
 * relative links, the same egress rules for everything a document loads (a loopback canary
 * that is not allowlisted sees no connection), the body limits, the cache key over the
 * document, and the refusals.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import {
  assertNear,
  type FixtureSite,
  pngPixel,
  type Rgb,
  sleep,
  startSite,
} from '../helpers/fixtures.ts';

/** A one-colour PNG, for the fixture site's relative image. */
function solidPng(width: number, height: number, [r, g, b]: Rgb): Buffer {
  const png = new PNG({ width, height });
  for (let i = 0; i < width * height; i++) png.data.set([r, g, b, 255], i * 4);
  return PNG.sync.write(png);
}

const RED: Rgb = [255, 0, 0];
const BLUE: Rgb = [0, 0, 255];
const WHITE: Rgb = [255, 255, 255];
/** The Markdown stylesheet's dark background (#0d1117). */
const DARK: Rgb = [13, 17, 23];

/** Looked-up names: the egress checks' resolver, which answers none. */
const lookedUp: string[] = [];

describe('HTML and Markdown captures', () => {
  let t: TestApp;
  let site: FixtureSite;
  let canary: Server;
  let canaryConnections = 0;
  let canaryOrigin = '';
  let pro = '';
  let free = '';

  before(async () => {
    canary = createServer((socket) => {
      canaryConnections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    canaryOrigin = `http://127.0.0.2:${(canary.address() as { port: number }).port}`;
    const red = solidPng(8, 8, RED);
    site = await startSite({
      '/assets/red.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' }).end(red);
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '2' },
      plans: { free: { rate_per_minute: 1000 }, pro: { rate_per_minute: 1000 } },
      resolver: {
        resolve: async (name) => {
          lookedUp.push(name);
          throw Object.assign(new Error(`${name} does not resolve here`), { code: 'ENOTFOUND' });
        },
      },
    });
    pro = await newApiKey(t, { plan: 'pro' });
    free = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
    canary?.close();
  });

  const post = (json: unknown, key = free) =>
    t.fetch('/v1/screenshots', { method: 'POST', json, headers: { 'x-api-key': key } });

  /** A 201 capture; its answer and its hosted PNG, read back. */
  async function shot(json: Record<string, unknown>, key = free) {
    const res = await post({ width: 400, height: 300, ...json }, key);
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const answer = JSON.parse(text) as CaptureAnswer;
    const image = await fetch(answer.image_url);
    assert.equal(image.status, 200);
    return { answer, png: PNG.sync.read(Buffer.from(await image.arrayBuffer())) };
  }

  /** A refusal; `code` null where the answer carries none (a 413 is `{error}` alone). */
  async function refusal(res: Response, status: number, code: string | null, pattern: RegExp) {
    const body = (await res.json()) as { code?: string; error: string };
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(body.code, code ?? undefined);
    assert.match(body.error, pattern);
  }

  it('captures an HTML document: its own pixels at the viewport size', async () => {
    const { answer, png } = await shot({
      html:
        '<!doctype html><body style="margin:0;background:#00f">' +
        '<div style="width:100px;height:100px;background:#f00"></div></body>',
    });
    assert.equal(answer.width, 400);
    assert.equal(answer.height, 300);
    assertNear(pngPixel(png, 50, 50), RED, 'the red square');
    assertNear(pngPixel(png, 300, 200), BLUE, 'the blue page');
    // With a request filter (puppeteer's interception answers instead of our own session).
    const filtered = await shot({
      html:
        '<!doctype html><body style="margin:0;background:#f00">' +
        '<img src="https://ads.example/banner.png" width="10" height="10"></body>',
      block_requests: ['*ads.example*'],
    });
    assertNear(pngPixel(filtered.png, 200, 150), RED, 'the filtered document');
  });

  it('renders Markdown in the service stylesheet, light and with dark_mode dark', async () => {
    const markdown =
      '# Release notes\n\nSome **bold** text and a [link](https://example.com/).\n\n' +
      '| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n- [ ] open\n';
    const light = await shot({ markdown, metadata: true });
    assertNear(pngPixel(light.png, 5, 5), WHITE, 'the light background');
    const dark = await shot({ markdown, dark_mode: true });
    assertNear(pngPixel(dark.png, 5, 5), DARK, 'the dark background');
    // The heading is drawn: dark text on light, in the column's first lines.
    let inked = 0;
    for (let x = 40; x < 380; x++) {
      for (let y = 30; y < 70; y++) if (pngPixel(light.png, x, y)[0] < 100) inked++;
    }
    assert.ok(inked > 200, `the heading's ink: ${inked} dark pixels`);
    assert.equal(light.answer.metadata?.title, 'Release notes');
  });

  it('renders Markdown in the page: a hostile one holds its own capture, not the service', async () => {
    // marked is quadratic on this (about 10 s in Node): rendered in the service it would hold
    // the event loop, and the small capture sent after it would answer after it.
    const order: string[] = [];
    const hostile = post({ markdown: '_a'.repeat(60_000) }).then(async (res) => {
      order.push('hostile');
      return res.status;
    });
    await sleep(200);
    // Another account: one account's captures wait for its earlier ones.
    const small = await post({ html: '<p>small</p>' }, pro);
    order.push('small');
    assert.equal(small.status, 201, await small.text());
    assert.ok([201, 504].includes(await hostile));
    assert.deepEqual(order, ['small', 'hostile']);
  });

  it('resolves relative links against base_url; without it they load nothing', async () => {
    const html =
      '<!doctype html><body style="margin:0;background:#fff">' +
      '<img src="red.png" style="display:block;width:100px;height:100px"></body>';
    const based = await shot({ html, base_url: `${site.origin}/assets/` });
    assertNear(pngPixel(based.png, 50, 50), RED, 'the relative image');
    assert.equal(site.hits.get('/assets/red.png'), 1);
    // base_url names where the document stands: the document itself is never fetched.
    assert.equal(site.hits.get('/assets/'), undefined);
    const unbased = await shot({ html: `${html}<!-- unbased -->` });
    assert.notDeepEqual(pngPixel(unbased.png, 50, 50), RED);
    assert.equal(site.hits.get('/assets/red.png'), 1);
    // The placeholder's name is answered in the browser: never even looked up.
    assert.ok(
      !lookedUp.some((name) => name.endsWith('.invalid')),
      t.logs.filter((l) => l.includes('invalid')).join('\n'),
    );
  });

  it('gives everything a document loads the egress rules of a URL capture', async () => {
    const c = canaryOrigin;
    const html =
      `<img src="${c}/img.png"><iframe src="${c}/iframe"></iframe>` +
      `<link rel="stylesheet" href="${c}/css"><script src="${c}/script.js"></script>` +
      `<script>fetch('${c}/fetch').catch(() => {}); try { new WebSocket('ws://127.0.0.2:1/ws') } catch {}</script>`;
    await shot({ html });
    await shot({ markdown: `![x](${c}/md.png)\n\n<img src="${c}/raw.png">` });
    for (const hostile of [
      `<meta http-equiv="refresh" content="0;url=${c}/meta">`,
      `<script>location.href = '${c}/location'</script>`,
    ]) {
      const res = await post({ html: hostile });
      assert.ok([201, 400].includes(res.status), `${hostile}: ${res.status}`);
    }
    await sleep(300);
    assert.equal(canaryConnections, 0);
    // A base_url at a refused address is refused as a url would be, before any browser time.
    await refusal(
      await post({ html: '<p>x</p>', base_url: `${c}/` }),
      400,
      'url_not_allowed',
      /127\.0\.0\.2|not allowed/,
    );
    await refusal(
      await post({ html: '<p>x</p>', base_url: 'file:///etc/passwd' }),
      400,
      'url_not_allowed',
      /^base_url must use http or https/,
    );
    assert.equal(canaryConnections, 0);
  });

  it('keys the cache by the document: the same one is a hit, another is not', async () => {
    const first = await shot({ html: '<p>cache one</p>' });
    assert.equal(first.answer.cached, false);
    const again = await shot({ html: '<p>cache one</p>' });
    assert.equal(again.answer.cached, true);
    assert.equal(again.answer.image_url, first.answer.image_url);
    const other = await shot({ html: '<p>cache two</p>' });
    assert.equal(other.answer.cached, false);
    const markdown = await shot({ markdown: 'cache one' });
    assert.equal(markdown.answer.cached, false);
  });

  it('takes a document up to 1 MiB in a body up to 1.5 MiB; other bodies stay at 64 KiB', async () => {
    const big = `<p style="margin:0">${'x'.repeat(1024 * 1024 - 200)}</p>`;
    const { answer } = await shot({ html: big });
    assert.equal(answer.width, 400);
    await refusal(
      await post({ html: `${big}${'y'.repeat(400)}` }),
      400,
      'invalid_request',
      /html must be at most 1048576 characters/,
    );
    // Counted in UTF-8 bytes: 400 Ks of two bytes each are 800 KiB, over 256 KiB.
    await refusal(
      await post({ markdown: 'é'.repeat(200 * 1024) }),
      400,
      'invalid_request',
      /markdown may be at most 256 KiB \(got 409600 bytes\)/,
    );
    await refusal(
      await post({ markdown: 'z'.repeat(256 * 1024 + 1) }),
      400,
      'invalid_request',
      /markdown/,
    );
    // 70 KiB of JSON whitespace around a url: the body is over the plain limit.
    const padded = `{"url": "https://example.com/"${' '.repeat(70 * 1024)}}`;
    const plain = await t.fetch('/v1/screenshots', {
      method: 'POST',
      body: padded,
      headers: { 'x-api-key': free, 'content-type': 'application/json' },
    });
    await refusal(plain, 413, null, /64 KiB.*1536 KiB only with html or markdown/);
    // The same, chunked (no Content-Length): counted as it arrives.
    const chunked = await t.fetch('/v1/screenshots', {
      method: 'POST',
      body: new Blob([padded]).stream(),
      duplex: 'half',
      headers: { 'x-api-key': free, 'content-type': 'application/json' },
    } as RequestInit);
    await refusal(chunked, 413, null, /64 KiB/);
    const huge = await post({ html: 'h'.repeat(1.6 * 1024 * 1024) });
    await refusal(huge, 413, null, /1536 KiB/);
  });

  it('asks for exactly one of url, html or markdown, and base_url only with a document', async () => {
    await refusal(await post({ width: 400 }), 400, 'invalid_request', /url, html or markdown/);
    await refusal(
      await post({ url: 'https://example.com/', html: '<p>x</p>' }),
      400,
      'invalid_request',
      /only one of url, html or markdown \(got url and html\)/,
    );
    await refusal(
      await post({ html: '<p>x</p>', markdown: 'x' }),
      400,
      'invalid_request',
      /got html and markdown/,
    );
    await refusal(
      await post({ url: 'https://example.com/', base_url: 'https://example.com/' }),
      400,
      'invalid_request',
      /base_url is only for html or markdown/,
    );
    await refusal(await post({ html: '' }), 400, 'invalid_request', /html/);
    await refusal(await post({ html: 42 }), 400, 'invalid_request', /html/);
    // The demo stays URL-only.
    const demo = await t.fetch('/demo/screenshot', { method: 'POST', json: { html: '<p>x</p>' } });
    assert.equal(demo.status, 400);
  });

  it('runs a document as an async job like any capture', async () => {
    const res = await post({ html: '<body style="background:#f00"></body>', async: true }, pro);
    const queued = (await res.json()) as { id: string; status_url: string };
    assert.equal(res.status, 202, JSON.stringify(queued));
    let job: { status: string; image_url?: string } = { status: 'queued' };
    for (let i = 0; i < 600 && (job.status === 'queued' || job.status === 'rendering'); i++) {
      await sleep(100);
      const got = await t.fetch(`/v1/screenshots/${queued.id}`, { headers: { 'x-api-key': pro } });
      job = (await got.json()) as typeof job;
    }
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const image = PNG.sync.read(
      Buffer.from(await (await fetch(String(job.image_url))).arrayBuffer()),
    );
    assertNear(pngPixel(image, 10, 10), RED, 'the job image');
  });
});
