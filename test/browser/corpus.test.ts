/**
 * The page corpus (docs/corpus.md): real third-party pages shipped inside npm packages
 * (corpus/pages.ts), served on 127.0.0.1 by corpus/server.ts and captured by the real renderer.
 * Nothing here compares against a hand-made image: each page is compared with itself, captured
 * again, later (`delay`), with its reveal library's hiding turned off by CSS, or at another
 * size. Where it can, a test first checks its reference or its measure (two late captures
 * agree; the banner measure sees nothing where the banner is hidden), so a failure says which
 * side broke.
 *
 * Network: Chromium's proxy is the corpus server itself, so no connection ever leaves
 * 127.0.0.1; external URLs in the pages are rewritten to local 404s.
 *
 * CORPUS_SHOTS=<dir> saves every capture there as <page>-<label>.png.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { DEVICES } from '../../src/domain/captures/devices.ts';
import type { RenderOptions, RenderResult } from '../../src/domain/captures/renderer.ts';
import {
  crop,
  decodePng,
  difference,
  flatBands,
  isFlat,
  pct,
  type Raster,
  resample,
  runsOf,
  shareOf,
} from './corpus/images.ts';
import { CORPUS, type CorpusId, corpusPage } from './corpus/pages.ts';
import { type CorpusServer, rewriteExternalUrls, startCorpusServer } from './corpus/server.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
/** A render's deadline: generous, for a slow and busy machine. */
const DEADLINE_MS = 60_000;
const DESKTOP = { width: 1280, height: 800 };
/** Two captures of a page at rest differ in fewer pixels than this. */
const SAME = 0.005;

/** Every mobile preset: phones and tablets (a page without a viewport tag is zoomed out). */
const PHONES = DEVICES.filter((d) => d.mobile);
const SHOTS = process.env.CORPUS_SHOTS;
/** The requests for another host that the server test itself makes. */
const SELF_TEST = ['GET http://example.com/', 'CONNECT example.com:443'];

interface Shot {
  result: RenderResult;
  pixels: Raster;
}

describe('the page corpus', () => {
  let server: CorpusServer;
  let t: TestRenderer;

  before(async () => {
    server = await startCorpusServer([...new Set(CORPUS.map((p) => p.pkg))]);
    t = await startRenderer({ proxyUrl: server.proxyUrl });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  after(async () => {
    await t?.close();
    await server?.close();
  });

  /** Captures corpus page `id` at 1280x800 (PNG) with `options`. */
  async function shot(
    id: CorpusId,
    label: string,
    options: Partial<RenderOptions> = {},
  ): Promise<Shot> {
    const page = corpusPage(id);
    const result = await t.render(
      { url: server.url(page.pkg, page.path), ...DESKTOP, format: 'png', ...options },
      DEADLINE_MS,
    );
    if (SHOTS) writeFileSync(join(SHOTS, `${id}-${label}.png`), result.image);
    return { result, pixels: decodePng(result.image) };
  }

  const codes = (s: Shot) => s.result.warnings.map((w) => w.code);
  const warningsOf = (s: Shot) => JSON.stringify(s.result.warnings);

  it('the installed packages are the pinned versions, and every page is in its package', () => {
    const pins = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies;
    assert.ok(CORPUS.length >= 8, 'at least 8 pages');
    for (const page of CORPUS) {
      assert.equal(pins[page.pkg], page.version, `${page.pkg} pinned at ${page.version}`);
      const installed = JSON.parse(
        readFileSync(join(ROOT, 'node_modules', page.pkg, 'package.json'), 'utf8'),
      ) as { version: string };
      assert.equal(installed.version, page.version, `${page.pkg} installed`);
      assert.ok(statSync(join(ROOT, 'node_modules', page.pkg, page.path)).isFile(), page.path);
    }
  });

  it('the server rewrites external URLs, refuses other hosts and stays inside the packages', async () => {
    const origin = 'http://127.0.0.1:9';
    const rewrite = (text: string) => rewriteExternalUrls(text, 'pkg', origin, '127.0.0.1:9');
    const local = `${origin}/__external__/pkg`;
    assert.equal(
      rewrite('<link href="https://fonts.googleapis.com/css?family=A">'),
      `<link href="${local}/https/fonts.googleapis.com/css?family=A">`,
    );
    assert.equal(
      rewrite('<script src="//cdnjs.cloudflare.com/x.js"></script>'),
      `<script src="${local}/https/cdnjs.cloudflare.com/x.js"></script>`,
    );
    assert.equal(
      rewrite('url(//a.example.org/f.woff)'),
      `url(${local}/https/a.example.org/f.woff)`,
    );
    assert.equal(
      rewrite('"https:\\/\\/cdn.example.com\\/a"'),
      `"${local}/https/cdn.example.com\\/a"`,
    );
    assert.equal(
      rewrite("new WebSocket('wss://live.example.com:8443/s')"),
      `new WebSocket('ws://127.0.0.1:9/__external__/pkg/wss/live.example.com_8443/s')`,
    );
    assert.equal(rewrite('http://127.0.0.2:3000/x'), `${local}/http/127.0.0.2_3000/x`);
    // Left alone: this server, namespace names, comments and code that only look alike.
    for (const kept of [
      `<a href="${origin}/aos/x.html">`,
      '<svg xmlns="http://www.w3.org/2000/svg" xmlns:dc="http://purl.org/dc/elements/1.1/">',
      'createElementNS("http://www.w3.org/1999/xlink", "a")',
      '// Smooth scrolling using jQuery easing',
      'a = b //comment',
      '/^https?:\\/\\//.test(u)',
      'data:image/png;base64,iVBORw0KGgo//8AAA+/9k=',
    ]) {
      assert.equal(rewrite(kept), kept);
    }

    const get = (path: string) =>
      new Promise<number>((done, fail) => {
        const url = new URL(server.origin);
        request({ host: url.hostname, port: url.port, path }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        })
          .on('error', fail)
          .end();
      });
    assert.equal(await get('/aos/demo/simple.html'), 200);
    for (const path of [
      '/aos/../package.json',
      '/aos/%2e%2e/%2e%2e/package.json',
      '/aos/demo/..%2f..%2f..%2fpackage.json',
      '/aos/demo%5c..%5c..%5cpackage.json',
      '/aos/demo/',
      '/pngjs/package.json',
      '/__external__/self-test/https/example.com/',
    ]) {
      assert.equal(await get(path), 404, path);
    }
    // Chromium's own background requests arrive here too, at any time: look for ours by name.
    const escaped = (request: string) => server.escaped.some((e) => e.request === request);
    assert.equal(await get('http://example.com/'), 404, 'absolute-form request, another host');
    assert.ok(escaped(SELF_TEST[0] ?? ''));
    const connect = await new Promise<number>((done, fail) => {
      const url = new URL(server.origin);
      request({ host: url.hostname, port: url.port, path: 'example.com:443', method: 'CONNECT' })
        .on('connect', (res, socket) => {
          socket.destroy();
          done(res.statusCode ?? 0);
        })
        .on('error', fail)
        .end();
    });
    assert.equal(connect, 403, 'CONNECT (https through the proxy) refused');
    assert.ok(escaped(SELF_TEST[1] ?? ''));
  });

  for (const [id, fullPage] of [
    ['sb-admin-dashboard', false],
    ['sb-admin-charts', true],
  ] as const) {
    it(`${id}: Chart.js charts are captured at their end state, the same every time`, async (c: TestContext) => {
      const first = await shot(id, 'default-1', { fullPage });
      const second = await shot(id, 'default-2', { fullPage });
      const late = await shot(id, 'delay-3000', { fullPage, delay: 3000 });
      if (id === 'sb-admin-dashboard') {
        // The reference: two late captures agree, so the page does come to one end state.
        const late2 = await shot(id, 'delay-3000-2', { fullPage, delay: 3000 });
        const ref = difference(late.pixels, late2.pixels);
        c.diagnostic(`two captures with delay 3000 differ in ${pct(ref.fraction)}`);
        assert.ok(ref.fraction < SAME, `reference unstable: ${pct(ref.fraction)}`);
      }
      const twice = difference(first.pixels, second.pixels);
      const vsLate = difference(first.pixels, late.pixels);
      c.diagnostic(
        `default vs default: ${pct(twice.fraction)} (rows ${twice.rows}); default vs delay 3000: ${pct(vsLate.fraction)} (rows ${vsLate.rows})`,
      );
      c.diagnostic(`warnings: ${warningsOf(first)} ${warningsOf(second)}`);
      assert.ok(
        vsLate.fraction < SAME,
        `the default capture is not the charts' end state: ${pct(vsLate.fraction)} of pixels differ from a capture 3 s later`,
      );
      assert.ok(twice.fraction < SAME, `two captures differ in ${pct(twice.fraction)}`);
      assert.deepEqual(first.result.warnings, [], 'a page at rest has no warnings');
    });
  }

  it('cookieconsent: the banner that fades in after load is captured; blocking removes or reports it', async (c: TestContext) => {
    // The banner: a bar across the bottom of the viewport in the page's palette (#eaf7f7).
    const bar = { x: 0, y: 745, width: 1280, height: 50 };
    const banner = [234, 247, 247] as const;
    const plain = await shot('cookieconsent-api', 'default');
    const hidden = await shot('cookieconsent-api', 'hidden', { hideSelectors: ['.cc-window'] });
    const blocked = await shot('cookieconsent-api', 'blocked', { blockCookieBanners: true });
    const share = {
      plain: shareOf(plain.pixels, bar, banner),
      hidden: shareOf(hidden.pixels, bar, banner),
      blocked: shareOf(blocked.pixels, bar, banner),
    };
    c.diagnostic(`banner colour in the bottom band: ${JSON.stringify(share)}`);
    c.diagnostic(`warnings: default ${warningsOf(plain)}, blocked ${warningsOf(blocked)}`);
    assert.ok(
      share.hidden < 0.05,
      `the measure sees no banner where it is hidden: ${share.hidden}`,
    );
    assert.ok(share.plain > 0.6, `the banner is in the default capture: ${share.plain}`);
    assert.deepEqual(plain.result.warnings, []);
    assert.ok(
      share.blocked < 0.05 || codes(blocked).includes('banner_remaining'),
      `with block_cookie_banners the banner is gone or reported: ${share.blocked}, ${warningsOf(blocked)}`,
    );
  });

  it('wow.js demo on every mobile preset (no viewport tag): the whole 980 px layout, zoomed out, viewport and full page', async (c: TestContext) => {
    assert.ok(PHONES.length >= 20, 'every mobile preset');
    // What a phone browser shows: the page laid out 980 CSS px wide, scaled to the screen,
    // against a desktop capture of that layout at the phone's proportions (one per size), or
    // of the whole layout for a full page.
    const desktops = new Map<string, Shot>();
    const failures: string[] = [];
    for (const preset of PHONES) {
      for (const fullPage of [false, true]) {
        const { name, width, height, deviceScaleFactor, mobile, hasTouch, userAgent } = preset;
        const label = `${name}${fullPage ? '-full' : ''}`;
        const phone = await shot('wow-demo', label, {
          width,
          height,
          deviceScaleFactor,
          mobile,
          hasTouch,
          userAgent,
          fullPage,
        });
        // A screen wider than 980 px (a large tablet) lays the page out at its own width.
        const layout = Math.max(980, width);
        const desktopSize = { width: layout, height: Math.round((height * layout) / width) };
        const sizeKey = `${desktopSize.width}x${fullPage ? 'full' : desktopSize.height}`;
        let desktop = desktops.get(sizeKey);
        if (desktop === undefined) {
          // A full page's reference is as tall as its document: a short viewport adds nothing.
          desktop = await shot('wow-demo', `desktop-${sizeKey}`, {
            ...desktopSize,
            ...(fullPage ? { height: 400 } : {}),
            fullPage,
          });
          desktops.set(sizeKey, desktop);
        }
        assert.equal(phone.result.width, Math.round(width * deviceScaleFactor), label);
        const scaled = resample(phone.pixels, desktop.pixels.width, desktop.pixels.height);
        const diff = difference(scaled, desktop.pixels, 48);
        // The right third of the image: as much of the yellow section as on the desktop.
        const yellow = [241, 196, 15] as const;
        const right = (p: Raster) => ({
          x: Math.floor((p.width * 2) / 3),
          y: 0,
          width: Math.ceil(p.width / 3),
          height: p.height,
        });
        const rightShare = {
          phone: shareOf(phone.pixels, right(phone.pixels), yellow),
          desktop: shareOf(desktop.pixels, right(desktop.pixels), yellow),
        };
        // A full page zoomed otherwise than the phone shows it has other proportions: the
        // layout's document, or the screen where that is taller.
        const aspect = {
          phone: phone.pixels.height / phone.pixels.width,
          desktop: fullPage
            ? Math.max(desktop.pixels.height / desktop.pixels.width, height / width)
            : desktop.pixels.height / desktop.pixels.width,
        };
        c.diagnostic(
          `${label}: scaled to the layout's width vs the desktop capture of it: ${pct(diff.fraction)} differ; yellow in the right third ${JSON.stringify(rightShare)}; height/width ${aspect.phone.toFixed(3)} vs ${aspect.desktop.toFixed(3)}; warnings ${warningsOf(phone)}`,
        );
        assert.ok(
          rightShare.desktop > 0.05,
          'the desktop capture has the section in its right third',
        );
        // Unzoomed (the left 390 px of the layout at full size) it is about 0.36 against 0.14,
        // and about 88% of the pixels differ. A full page is compared by its proportions and
        // its right third alone: its sections slide in as they are scrolled to (the last one
        // for 4 s), which the reveal tests below hold on their own.
        if (
          Math.abs(rightShare.phone - rightShare.desktop) >= 0.03 ||
          (!fullPage && diff.fraction >= 0.1) ||
          Math.abs(aspect.phone / aspect.desktop - 1) > 0.02
        ) {
          failures.push(
            `${label}: ${pct(diff.fraction)} differ, right third ${JSON.stringify(rightShare)}, height/width ${aspect.phone.toFixed(3)} vs ${aspect.desktop.toFixed(3)}`,
          );
        }
        if (phone.result.warnings.length > 0) {
          failures.push(`${label}: warnings ${warningsOf(phone)}`);
        }
      }
    }
    assert.deepEqual(failures, [], 'every mobile preset shows the 980 px layout zoomed out');
  });

  /**
   * Full-page captures of a scroll-reveal page against one with the library's hiding turned
   * off: no band that has content there may be blank, and the images match closely.
   */
  async function revealMatches(
    c: TestContext,
    id: CorpusId,
    revealed: string,
    runs: number,
  ): Promise<void> {
    const band = 40;
    const reference = await shot(id, 'full-revealed', { fullPage: true, styles: revealed });
    const refFlat = new Set(flatBands(reference.pixels, band));
    const bands = Math.ceil(reference.pixels.height / band);
    c.diagnostic(
      `reference: ${reference.result.width}x${reference.result.height}, ${refFlat.size} of ${bands} bands blank`,
    );
    const failures: string[] = [];
    for (let run = 1; run <= runs; run++) {
      const full = await shot(id, `full-${run}`, { fullPage: true });
      const blank = flatBands(full.pixels, band).filter((i) => !refFlat.has(i));
      const diff = difference(full.pixels, reference.pixels, 8);
      const where = blank.slice(0, 8).map((i) => i * band);
      c.diagnostic(
        `run ${run}: ${full.result.width}x${full.result.height}, ${blank.length} bands blank that have content when revealed${blank.length > 0 ? ` (from y ${where.join(', ')}${blank.length > 8 ? ', ...' : ''})` : ''}, ${pct(diff.fraction)} of pixels differ (rows ${diff.rows}), warnings ${warningsOf(full)}`,
      );
      if (blank.length > 0 || diff.fraction >= 0.01) {
        failures.push(`run ${run}: ${blank.length} blank bands, ${pct(diff.fraction)} differ`);
      }
    }
    assert.deepEqual(failures, [], 'full-page captures show every revealed element');
  }

  it('AOS demo: a full page shows every box, as with AOS hiding turned off', async (c: TestContext) => {
    await revealMatches(
      c,
      'aos-demo',
      '[data-aos]{opacity:1!important;transform:none!important;transition:none!important}',
      2,
    );
  });

  it('WOW.js demo: a full page shows every section, five times in a row', async (c: TestContext) => {
    // Five: a section left hidden came in some captures only.
    await revealMatches(
      c,
      'wow-demo',
      '.wow{visibility:visible!important;animation:none!important}',
      5,
    );
  });

  it('vanilla-lazyload demo: every lazy image is decoded in the full page', async (c: TestContext) => {
    const full = await shot('lazyload-demo', 'full', { fullPage: true });
    // The page's own layout: 40 images of 220x280 CSS px in a column, 8 px from the corner.
    assert.equal(full.result.height, 8 + 40 * 280 + 8);
    const blank: number[] = [];
    for (let i = 0; i < 40; i++) {
      if (isFlat(full.pixels, { x: 8, y: 8 + 280 * i, width: 220, height: 280 })) blank.push(i);
    }
    c.diagnostic(`blank image boxes: ${blank.length} of 40 (${blank.join(',')})`);
    assert.deepEqual(blank, [], 'images not shown');
    assert.deepEqual(full.result.warnings, []);
  });

  it('agency: the fixed header is captured once, in its unscrolled state, in a full page', async (c: TestContext) => {
    const viewport = await shot('agency', 'viewport');
    const full = await shot('agency', 'full', { fullPage: true });
    // The same page with the header in the flow: it can only be at the top, unscrolled.
    const inFlow = await shot('agency', 'full-header-in-flow', {
      fullPage: true,
      styles: '#mainNav{position:absolute!important}',
    });
    const top = difference(crop(full.pixels, 0, DESKTOP.height), viewport.pixels, 8);
    const whole = difference(full.pixels, inFlow.pixels, 8);
    c.diagnostic(
      `full page ${full.result.height} px; its top vs the viewport capture: ${pct(top.fraction)} (rows ${top.rows}); vs the header in flow: ${pct(whole.fraction)} (rows ${whole.rows}); warnings ${warningsOf(full)}`,
    );
    assert.ok(top.fraction < 0.01, `the top of the full page is not what the viewport shows`);
    assert.ok(
      whole.fraction < SAME,
      `the fixed header is drawn differently: ${pct(whole.fraction)}`,
    );
    assert.deepEqual(full.result.warnings, []);
    assert.deepEqual(viewport.result.warnings, []);
  });

  it('reveal.js demo: the deck is the same twice, with no warnings', async (c: TestContext) => {
    const first = await shot('reveal-demo', 'default-1');
    const second = await shot('reveal-demo', 'default-2');
    const diff = difference(first.pixels, second.pixels);
    c.diagnostic(`two captures differ in ${pct(diff.fraction)}; warnings ${warningsOf(first)}`);
    assert.ok(diff.fraction < SAME, `two captures differ in ${pct(diff.fraction)}`);
    assert.deepEqual(first.result.warnings, []);
  });

  it('owl carousel (autoplay): captured between two slides, four whole items', async (c: TestContext) => {
    const capture = await shot('owl-autoplay', 'default');
    // A row through the lower part of the items (#4dc7a0), below their numbers.
    const runs = runsOf(capture.pixels, 380, [77, 199, 160]);
    c.diagnostic(`item runs at y=380: ${JSON.stringify(runs)}; warnings ${warningsOf(capture)}`);
    assert.equal(runs.length, 4, `four items in view: ${JSON.stringify(runs)}`);
    const widths = runs.map(([, w]) => w);
    assert.ok(
      Math.max(...widths) - Math.min(...widths) <= 2,
      `items cut at the edges (mid-slide): ${JSON.stringify(runs)}`,
    );
  });

  it('no page reached another host; external URLs were answered here', (c: TestContext) => {
    for (const [pkg, urls] of server.external) {
      c.diagnostic(
        `${pkg}: ${urls.length} external requests answered 404 (${[...new Set(urls)].join(' ')})`,
      );
    }
    c.diagnostic(
      `requests for other hosts refused at the proxy: ${server.escaped.length} (${[...new Set(server.escaped.map((e) => e.request.replace(/\?.*/, '')))].join(' ')})`,
    );
    // Chromium's own background requests (component updates, network time, accounts) reach the
    // proxy too, without a referer; anything else came from a page, past the rewriting.
    const fromPages = server.escaped.filter(
      (e) => e.referer?.startsWith(server.origin) || !SELF_TEST.includes(e.request),
    );
    assert.deepEqual(fromPages, [], 'a page, or Chromium itself, asked for another host');
  });
});
