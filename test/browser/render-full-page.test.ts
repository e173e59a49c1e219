/**
 * Full-page captures of the pages users most often find broken, each checked in decoded
 * pixels: content that scrolls inside an element, lazy images (native and observer-driven),
 * `100vh` sections, fixed and sticky elements, and a web font that arrives late.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  near,
  type Pixels,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const RED = [255, 0, 0];
const GREEN = [0, 128, 0];
const BLUE = [0, 0, 255];
const WHITE = [255, 255, 255];

/** Rows (every 10 px at x) whose colour is near `rgb`. */
const rowsOf = (image: Pixels, x: number, rgb: number[]): number[] => {
  const rows: number[] = [];
  for (let y = 0; y < image.height; y += 10) if (near(image.at(x, y), rgb)) rows.push(y);
  return rows;
};

describe('full page', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  before(async () => {
    const font = readFileSync(join(import.meta.dirname, '../../bench/fixtures/realistic/font.ttf'));
    site = await startSite({
      // The document does not scroll; <main> does, over 5,000 px, a green band near its end.
      '/inner': page(
        `<main style="height:100vh;overflow:auto">
           <div style="height:4800px;background:rgb(255,255,255)"></div>
           <div style="height:100px;background:rgb(0,128,0)"></div>
           <div style="height:100px"></div>
         </main>`,
        '<style>html,body{height:100%;overflow:hidden;margin:0}</style>',
      ),
      // A page that scrolls itself, with a small scrolling box: nothing is expanded.
      '/widget': page(
        `<div style="height:200px;width:150px;overflow:auto"><div style="height:5000px"></div></div>
         <div style="height:1800px"></div>`,
      ),
      // A native lazy image and an observer-driven one, 3,000 and 4,000 px down.
      '/lazy': page(
        `<div style="height:3000px"></div>
         <img loading="lazy" src="/red.png" style="display:block;width:100px;height:100px">
         <div style="height:900px"></div>
         <img id="io" data-src="/blue.png" style="display:block;width:100px;height:100px">
         <div style="height:500px"></div>
         <script>
           new IntersectionObserver((entries, o) => {
             for (const e of entries) if (e.isIntersecting) { e.target.src = e.target.dataset.src; o.disconnect(); }
           }).observe(document.getElementById('io'));
         </script>`,
      ),
      // A 100vh hero (blue) over 2,000 px of white.
      '/hero': page(
        '<section style="height:100vh;background:rgb(0,0,255)"></section><div style="height:2000px"></div>',
      ),
      // A fixed red header and a sticky green bar, over 3,000 px.
      '/fixed': page(
        `<header style="position:fixed;top:0;left:0;right:0;height:50px;background:rgb(255,0,0);z-index:2"></header>
         <div style="height:100px"></div>
         <nav style="position:sticky;top:50px;height:30px;background:rgb(0,128,0);z-index:1"></nav>
         <div style="height:3000px"></div>`,
      ),
      // Text in a web font that arrives 600 ms late, far down the page.
      '/font': page(
        `<div style="height:2000px"></div>
         <p id="text" style="font-size:40px;white-space:nowrap;display:inline-block">Mmmmmmmmmm</p>`,
        `<style>@font-face{font-family:"Late";src:url("/late.ttf") format("truetype");font-display:block}
                #text{font-family:"Late",monospace}</style>`,
      ),
      '/red.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(100, 100, [255, 0, 0]));
      },
      '/blue.png': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(100, 100, [0, 0, 255]));
      },
      '/late.ttf': async (_req, res) => {
        await sleep(600);
        res.writeHead(200, { 'content-type': 'font/ttf' }).end(font);
      },
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const full = async (path: string) =>
    decodeImage(
      (
        await t.render(
          { url: `${site.origin}${path}`, width: 400, height: 300, fullPage: true },
          30_000,
        )
      ).image,
    );

  it('expands the tallest inner scroller: its whole content is in the image', async () => {
    const image = await full('/inner');
    assert.ok(image.height >= 5_000, `${image.height} px tall`);
    assertColor(image, 200, 4_850, GREEN, 'the band near the end of the inner content');
    assertColor(image, 200, 100, WHITE, 'the top');
  });

  it('leaves a small scroller alone on a page that scrolls itself', async () => {
    const image = await full('/widget');
    assert.equal(image.height, 2_000);
  });

  it('loads lazy images, native and observer-driven', async () => {
    const image = await full('/lazy');
    assertColor(image, 50, 3_050, RED, 'the native lazy image');
    assertColor(image, 50, 4_050, BLUE, 'the observer-driven image');
  });

  it("keeps a 100vh section at the viewport's height", async () => {
    const image = await full('/hero');
    assert.equal(image.height, 2_300);
    assertColor(image, 200, 150, BLUE, 'the hero');
    assertColor(image, 200, 295, BLUE, 'the hero, last rows');
    assertColor(image, 200, 320, WHITE, 'below the hero');
    assertColor(image, 200, 2_000, WHITE, 'far below');
  });

  it('shows fixed and sticky elements once, at the top', async () => {
    const image = await full('/fixed');
    assert.deepEqual(rowsOf(image, 200, RED), [0, 10, 20, 30, 40], 'the fixed header, once');
    const sticky = rowsOf(image, 200, GREEN);
    assert.deepEqual(sticky, [100, 110, 120], 'the sticky bar, in its place at the top');
  });

  it('waits for a late web font', async () => {
    const image = await full('/font');
    // Ten 40 px "m"s are about 330 px wide in the web font (Liberation Sans) and 240 px in the
    // monospace fallback; before the font arrives (font-display: block) they are invisible.
    let inked = false;
    for (let y = 2_030; y < 2_110 && !inked; y += 2) {
      for (let x = 260; x < 320 && !inked; x += 2) inked = (image.at(x, y)[0] ?? 255) < 128;
    }
    assert.ok(inked, 'the text is set in the web font');
  });
});
