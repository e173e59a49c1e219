/**
 * What the renderer produces, checked in the image bytes: formats and exact dimensions at
 * scale 1 and 2, full page (tall, lazy, cut), element capture, dark mode, hidden selectors,
 * transparent background, frozen animations, and the target's status.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, imageSize, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  near,
  rejectsWith,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const BLUE_BG = [10, 120, 200];

const ROUTES = {
  '/plain': page('', `<style>html,body{background:rgb(10,120,200)}</style>`),
  '/tall': page(
    `<div style="position:fixed;z-index:1;top:0;left:0;right:0;height:40px;background:rgb(0,0,255)"></div>
     <div style="position:relative;height:3000px;background:#fff">
       <div style="position:absolute;bottom:0;left:0;right:0;height:100px;background:rgb(0,200,0)"></div>
     </div>`,
  ),
  '/lazy': page(
    `<div style="height:3000px"></div>
     <img loading="lazy" src="/green.png" width="200" height="200" style="display:block">
     <div style="height:200px"></div>
     <img id="js-lazy" data-src="/blue.png" width="200" height="200" style="display:block">
     <div style="height:300px"></div>
     <script>
       new IntersectionObserver((entries, observer) => {
         for (const e of entries) if (e.isIntersecting) { e.target.src = e.target.dataset.src; observer.disconnect(); }
       }).observe(document.getElementById('js-lazy'));
     </script>`,
  ),
  '/green.png': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(200, 200, [0, 200, 0]));
  },
  '/blue.png': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(200, 200, [0, 0, 255]));
  },
  '/very-tall': page('<div style="height:40000px;background:linear-gradient(#f00,#00f)"></div>'),
  '/dark': page(
    '<p>theme</p>',
    `<style>body{background:rgb(255,255,255)}
      @media (prefers-color-scheme: dark){body{background:rgb(0,0,0)}}</style>`,
  ),
  '/reduced': page(
    '',
    `<style>body{background:rgb(255,255,255)}
      @media (prefers-reduced-motion: reduce){body{background:rgb(0,128,0)}}</style>`,
  ),
  '/hide': page(
    `<div id="ad" style="width:100px;height:100px;background:rgb(255,0,0)"></div>
     <div class="banner" style="width:100px;height:100px;background:rgb(255,0,0)"></div>`,
    '<style>body{background:rgb(255,255,255)}</style>',
  ),
  '/transparent': page('<div style="width:50px;height:50px;background:rgb(255,0,0)"></div>'),
  '/element': page(
    `<div style="height:1500px"></div>
     <div id="box" style="margin-left:37px;width:123px;height:45px;background:rgb(200,0,200)"></div>
     <div style="height:1500px"></div>`,
  ),
  '/animated': page(
    `<div id="fade" style="width:50px;height:50px;animation:fade 10s forwards"></div>
     <div id="pulse" style="width:50px;height:50px;background:rgb(255,255,255);animation:pulse 1s infinite"></div>
     <div id="move" style="width:50px;height:50px;background:rgb(255,0,0);transition:background-color 10s linear"></div>
     <script>
       addEventListener('load', () => { document.getElementById('move').style.backgroundColor = 'rgb(0,255,0)'; });
     </script>`,
    `<style>
       @keyframes fade { from { background: rgb(255,0,0) } to { background: rgb(0,0,255) } }
       @keyframes pulse { from { background: rgb(255,255,0) } to { background: rgb(0,0,0) } }
     </style>`,
  ),
  '/missing': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(404, { 'content-type': 'text/html' }).end(page('<h1>not here</h1>'));
  },
  '/moved': (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(302, { location: '/plain' }).end();
  },
};

describe('renderer output', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite(ROUTES);
    t = await startRenderer();
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const MAGIC = {
    png: (b: Buffer) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex')),
    jpeg: (b: Buffer) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
    webp: (b: Buffer) =>
      b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP',
  } as const;

  for (const format of ['png', 'jpeg', 'webp'] as const) {
    for (const dsf of [1, 2]) {
      it(`${format} at scale ${dsf}: magic bytes and exact size`, async () => {
        const result = await t.render({
          url: `${site.origin}/plain`,
          format,
          width: 300,
          height: 200,
          deviceScaleFactor: dsf,
          quality: 90,
        });
        assert.ok(MAGIC[format](result.image), `${format} magic bytes`);
        assert.equal(result.format, format);
        const size = imageSize(result.image);
        assert.deepEqual(size, { format, width: 300 * dsf, height: 200 * dsf });
        assert.equal(result.width, 300 * dsf);
        assert.equal(result.height, 200 * dsf);
        assert.equal(result.truncated, false);
        assert.equal(result.targetStatus, 200);
        if (format !== 'webp') {
          const pixels = decodeImage(result.image);
          assertColor(pixels, 150 * dsf, 100 * dsf, BLUE_BG, `${format} background`, 12);
        }
      });
    }
  }

  it('jpeg quality changes the encoding', async () => {
    const url = `${site.origin}/very-tall`;
    const low = await t.render({ url, format: 'jpeg', quality: 5 });
    const high = await t.render({ url, format: 'jpeg', quality: 100 });
    assert.ok(low.image.length < high.image.length, `${low.image.length} < ${high.image.length}`);
  });

  it('full page: the whole document, fixed header once, bottom reached', async () => {
    for (const dsf of [1, 2]) {
      const result = await t.render({
        url: `${site.origin}/tall`,
        fullPage: true,
        deviceScaleFactor: dsf,
      });
      assert.deepEqual(imageSize(result.image), {
        format: 'png',
        width: 400 * dsf,
        height: 3000 * dsf,
      });
      assert.equal(result.truncated, false);
      const pixels = decodeImage(result.image);
      let blueRows = 0;
      for (let y = 0; y < pixels.height; y++) {
        if (near(pixels.at(10, y), [0, 0, 255], 4)) blueRows++;
      }
      assert.equal(blueRows, 40 * dsf, 'the fixed header appears once, not on every screen');
      assertColor(pixels, 10, pixels.height - 10, [0, 200, 0], 'bottom band');
      assertColor(pixels, 10, 1500 * dsf, [255, 255, 255], 'middle');
    }
  });

  it('full page: lazy images (native and IntersectionObserver) are loaded', async () => {
    const result = await t.render({ url: `${site.origin}/lazy`, fullPage: true });
    assert.equal(result.height, 3000 + 200 + 200 + 200 + 300);
    const pixels = decodeImage(result.image);
    assertColor(pixels, 100, 3100, [0, 200, 0], 'native lazy image');
    assertColor(pixels, 100, 3500, [0, 0, 255], 'script-driven lazy image');
  });

  it('full page: cut at maxPageHeight device pixels, truncated', async () => {
    for (const dsf of [1, 2]) {
      const result = await t.render({
        url: `${site.origin}/very-tall`,
        fullPage: true,
        width: 200,
        deviceScaleFactor: dsf,
      });
      assert.equal(result.truncated, true);
      assert.deepEqual(imageSize(result.image), {
        format: 'png',
        width: 200 * dsf,
        height: 16_384,
      });
      assert.equal(result.height, 16_384);
    }
  });

  it('viewport capture of a tall page is the viewport, not truncated', async () => {
    const result = await t.render({ url: `${site.origin}/very-tall`, width: 320, height: 240 });
    assert.deepEqual(imageSize(result.image), { format: 'png', width: 320, height: 240 });
    assert.equal(result.truncated, false);
  });

  it('element capture: exactly the element box, scrolled into view', async () => {
    for (const dsf of [1, 2]) {
      const result = await t.render({
        url: `${site.origin}/element`,
        selector: '#box',
        deviceScaleFactor: dsf,
      });
      assert.deepEqual(imageSize(result.image), {
        format: 'png',
        width: 123 * dsf,
        height: 45 * dsf,
      });
      const pixels = decodeImage(result.image);
      assertColor(pixels, 0, 0, [200, 0, 200], 'top-left of the element');
      assertColor(
        pixels,
        123 * dsf - 1,
        45 * dsf - 1,
        [200, 0, 200],
        'bottom-right of the element',
      );
    }
  });

  it('element capture: a selector that matches nothing is invalid_request naming it', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/element`, selector: '#nope' }),
      'invalid_request',
      /selector "#nope" matched no element/,
    );
  });

  it('a selector that does not parse is invalid_request', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/plain`, hideSelectors: ['div', 'a{}b'] }),
      'invalid_request',
      /"a\{\}b" is not a valid CSS selector/,
    );
  });

  it('dark mode emulates prefers-color-scheme: dark', async () => {
    const light = decodeImage((await t.render({ url: `${site.origin}/dark` })).image);
    const dark = decodeImage(
      (await t.render({ url: `${site.origin}/dark`, darkMode: true })).image,
    );
    assertColor(light, 390, 290, [255, 255, 255], 'light');
    assertColor(dark, 390, 290, [0, 0, 0], 'dark');
    // And the next capture is light again: emulation does not leak.
    const again = decodeImage((await t.render({ url: `${site.origin}/dark` })).image);
    assertColor(again, 390, 290, [255, 255, 255], 'light again');
  });

  it('reduced motion emulates prefers-reduced-motion: reduce', async () => {
    const normal = decodeImage((await t.render({ url: `${site.origin}/reduced` })).image);
    const reduced = decodeImage(
      (await t.render({ url: `${site.origin}/reduced`, reducedMotion: true })).image,
    );
    assertColor(normal, 200, 150, [255, 255, 255], 'no preference');
    assertColor(reduced, 200, 150, [0, 128, 0], 'reduce');
  });

  it('hide_selectors makes the matched elements invisible', async () => {
    const shown = decodeImage((await t.render({ url: `${site.origin}/hide` })).image);
    const hidden = decodeImage(
      (await t.render({ url: `${site.origin}/hide`, hideSelectors: ['#ad', '.banner'] })).image,
    );
    assertColor(shown, 50, 50, [255, 0, 0], 'ad shown');
    assertColor(shown, 50, 150, [255, 0, 0], 'banner shown');
    assertColor(hidden, 50, 50, [255, 255, 255], 'ad hidden');
    assertColor(hidden, 50, 150, [255, 255, 255], 'banner hidden');
    // The injected style went with that capture's document.
    const again = decodeImage((await t.render({ url: `${site.origin}/hide` })).image);
    assertColor(again, 50, 50, [255, 0, 0], 'ad shown again');
  });

  it('omit_background gives transparent pixels (png), opaque otherwise', async () => {
    const url = `${site.origin}/transparent`;
    const opaque = decodeImage((await t.render({ url })).image);
    const clear = decodeImage((await t.render({ url, omitBackground: true })).image);
    assertColor(opaque, 200, 200, [255, 255, 255, 255], 'default white background');
    assert.equal(clear.at(200, 200)[3], 0, 'background alpha is 0');
    assertColor(clear, 25, 25, [255, 0, 0, 255], 'content stays opaque');
    // The override is per capture: the next one is opaque again.
    const after = decodeImage((await t.render({ url })).image);
    assert.equal(after.at(200, 200)[3], 255);
  });

  it('animations and transitions are captured at their end state', async () => {
    const pixels = decodeImage((await t.render({ url: `${site.origin}/animated` })).image);
    assertColor(pixels, 25, 25, [0, 0, 255], 'finite animation finished (forwards)');
    assertColor(pixels, 25, 75, [255, 255, 255], 'infinite animation back to its base style');
    assertColor(pixels, 25, 125, [0, 255, 0], 'transition finished');
  });

  it('reports the target status: 404 still renders, redirects give the final status', async () => {
    const missing = await t.render({ url: `${site.origin}/missing` });
    assert.equal(missing.targetStatus, 404);
    assert.ok(missing.image.length > 0);
    const moved = await t.render({ url: `${site.origin}/moved` });
    assert.equal(moved.targetStatus, 200);
    assertColor(decodeImage(moved.image), 10, 10, BLUE_BG, 'redirect target');
  });
});
