/**
 * Scroll-reveal content in full pages (docs/api.md, `full_page`): content a page
 * reveals as it scrolls into view is visible everywhere down a full-page image, in every run.
 * Real library code where there is one (AOS 2.3.4 and WOW.js 1.2.2 with its animate.css, both
 * MIT, served from node_modules), and a hand-written IntersectionObserver reveal; then the
 * guards: what changes on scroll but is no reveal (a fixed "back to top" button, a header
 * that shrinks, a carousel that fades its slides) keeps its top-of-page look. All checked in
 * decoded pixels, each box at its centre.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, type Handler, page, startSite } from '../helpers/fixtures.ts';
import { decodeImage, near, type Pixels, startRenderer, type TestRenderer } from './helpers.ts';

const BLUE = [0, 0, 255];
const GREEN = [0, 128, 0];
const WHITE = [255, 255, 255];
const WIDTH = 800;
const HEIGHT = 600;
/** Generous: a slow, busy machine still answers well within it. */
const DEADLINE_MS = 60_000;

const modules = join(import.meta.dirname, '../../node_modules');
const file =
  (path: string, type: string): Handler =>
  (_req, res) => {
    res.writeHead(200, { 'content-type': type }).end(readFileSync(join(modules, path)));
  };

/** `count` blue boxes 100 px tall at x 50 to 350, `pitch` px apart from `top`, with `attrs`. */
const boxes = (count: number, pitch: number, attrs: (i: number) => string, top = 40): string =>
  Array.from(
    { length: count },
    (_, i) =>
      `<div ${attrs(i)} style="position:absolute;left:50px;top:${top + i * pitch}px;width:300px;height:100px;background:rgb(0,0,255)"></div>`,
  ).join('\n');

/** The boxes (numbered from 1) whose centre is not blue in the image. */
function hiddenBoxes(image: Pixels, count: number, pitch: number, top = 40): number[] {
  const hidden: number[] = [];
  for (let i = 0; i < count; i++) {
    if (!near(image.at(200, top + i * pitch + 50), BLUE, 24)) hidden.push(i + 1);
  }
  return hidden;
}

const AOS_TYPES = [
  'fade',
  'fade-up',
  'fade-down',
  'fade-left',
  'fade-right',
  'zoom-in',
  'zoom-out',
  'flip-up',
  'flip-left',
];
const WOW_TYPES = ['fadeIn', 'fadeInUp', 'fadeInDown', 'fadeInLeft', 'fadeInRight', 'bounceIn'];

describe('scroll-reveal content in full pages', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      '/aos.css': file('aos/dist/aos.css', 'text/css'),
      '/aos.js': file('aos/dist/aos.js', 'text/javascript'),
      '/animate.css': file('wow.js/css/libs/animate.css', 'text/css'),
      '/wow.js': file('wow.js/dist/wow.js', 'text/javascript'),
      // AOS with its defaults (once: false): a box loses `aos-animate` again when the page
      // scrolls back above it. 42 boxes over 6,000 px.
      '/aos': page(
        `<div style="position:relative;height:6000px">
           ${boxes(42, 140, (i) => `data-aos="${AOS_TYPES[i % AOS_TYPES.length]}"`)}
         </div>
         <script src="/aos.js"></script>
         <script>AOS.init();</script>`,
        '<link rel="stylesheet" href="/aos.css">',
      ),
      // WOW.js looks on a 50 ms interval (a flag set by scroll events): the last boxes are seen
      // only if the scroll waits at the bottom. 24 boxes over 6,000 px.
      '/wow': page(
        `<div style="position:relative;height:6000px">
           ${boxes(24, 250, (i) => `class="wow ${WOW_TYPES[i % WOW_TYPES.length]}"`)}
         </div>
         <script src="/wow.js"></script>
         <script>new WOW().init();</script>`,
        '<link rel="stylesheet" href="/animate.css">',
      ),
      // A reveal of the page's own: shown while in view, hidden again once out of it.
      '/observer': page(
        `<div style="position:relative;height:6000px">
           ${boxes(30, 195, () => 'class="reveal"')}
         </div>
         <script>
           const io = new IntersectionObserver((entries) => {
             for (const e of entries) e.target.classList.toggle('in', e.isIntersecting);
           });
           for (const el of document.querySelectorAll('.reveal')) io.observe(el);
         </script>`,
        '<style>.reveal{opacity:0;transform:translateY(40px);transition:opacity .6s,transform .6s}' +
          '.reveal.in{opacity:1;transform:none}</style>',
      ),
      // What changes on scroll but is no reveal, among observer-revealed boxes: a fixed header
      // (green, 100 px) that shrinks to a purple 40 px bar once scrolled; a fixed red "back to
      // top" button that slides in from below the viewport's edge once scrolled; a carousel
      // 3,000 px down whose three stacked slides (a red, green or blue stripe each) take turns
      // every 50 ms, fading.
      '/guards': page(
        `<header id="header" style="position:fixed;top:0;left:0;right:0;z-index:5"></header>
         <a id="top" href="#" style="position:fixed;right:20px;width:80px;height:80px;background:rgb(255,0,0);z-index:5"></a>
         <div style="position:relative;height:6000px">
           ${boxes(12, 500, () => 'class="reveal"', 200)}
           <div style="position:absolute;left:400px;top:3000px;width:300px;height:100px">
             <div class="slide on"><i style="left:0;background:rgb(255,0,0)"></i></div>
             <div class="slide"><i style="left:100px;background:rgb(0,128,0)"></i></div>
             <div class="slide"><i style="left:200px;background:rgb(0,0,255)"></i></div>
           </div>
         </div>
         <script>
           const header = document.getElementById('header');
           const button = document.getElementById('top');
           addEventListener('scroll', () => {
             header.classList.toggle('small', scrollY > 50);
             button.classList.toggle('show', scrollY > 300);
           });
           const slides = [...document.querySelectorAll('.slide')];
           let at = 0;
           setInterval(() => {
             slides[at].classList.remove('on');
             at = (at + 1) % slides.length;
             slides[at].classList.add('on');
           }, 50);
           const io = new IntersectionObserver((entries) => {
             for (const e of entries) e.target.classList.toggle('in', e.isIntersecting);
           });
           for (const el of document.querySelectorAll('.reveal')) io.observe(el);
         </script>`,
        `<style>
           #header{height:100px;background:rgb(0,128,0);transition:height .3s,background .3s}
           #header.small{height:40px;background:rgb(128,0,128)}
           #top{bottom:-60px;opacity:0;visibility:hidden;transition:all .3s}
           #top.show{bottom:20px;opacity:1;visibility:visible}
           .slide{position:absolute;inset:0;opacity:0;transition:opacity .4s}
           .slide i{position:absolute;top:0;width:100px;height:100px}
           .slide.on{opacity:1}
           .reveal{opacity:0;transition:opacity .6s}
           .reveal.in{opacity:1}
         </style>`,
      ),
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const full = async (path: string): Promise<Pixels> => {
    const url = `${site.origin}${path}`;
    const out = await t.render({ url, width: WIDTH, height: HEIGHT, fullPage: true }, DEADLINE_MS);
    const image = decodeImage(out.image);
    assert.equal(image.width, WIDTH);
    assert.equal(image.height, 6_000);
    return image;
  };

  it('shows every AOS box (once: false), in 3 runs', async () => {
    for (let run = 1; run <= 3; run++) {
      const hidden = hiddenBoxes(await full('/aos'), 42, 140);
      assert.deepEqual(hidden, [], `run ${run}: ${hidden.length} of 42 boxes hidden`);
    }
  });

  it('shows every WOW.js box, the last ones too, in 3 runs', async () => {
    for (let run = 1; run <= 3; run++) {
      const hidden = hiddenBoxes(await full('/wow'), 24, 250);
      assert.deepEqual(hidden, [], `run ${run}: ${hidden.length} of 24 boxes hidden`);
    }
  });

  it('shows every box of an observer that hides them again out of view, in 3 runs', async () => {
    for (let run = 1; run <= 3; run++) {
      const hidden = hiddenBoxes(await full('/observer'), 30, 195);
      assert.deepEqual(hidden, [], `run ${run}: ${hidden.length} of 30 boxes hidden`);
    }
  });

  it('keeps fixed elements and carousels as they are at the top', async () => {
    for (let run = 1; run <= 3; run++) {
      const image = await full('/guards');
      const label = `run ${run}`;
      assert.deepEqual(hiddenBoxes(image, 12, 500, 200), [], `${label}: the revealed boxes`);
      // The header at its full height, green: as at the top of the page, and only there.
      for (const y of [10, 60, 95]) {
        assert.ok(near(image.at(600, y), GREEN), `${label}: header row ${y} is green`);
      }
      assert.ok(near(image.at(600, 110), WHITE), `${label}: below the header`);
      // The "back to top" button stays hidden, as at the top.
      assert.ok(near(image.at(740, 540), WHITE), `${label}: no "back to top" button`);
      // One slide of the carousel shows: one stripe coloured, the others page background.
      const stripes = [450, 550, 650].filter((x) => !near(image.at(x, 3_050), WHITE));
      assert.equal(stripes.length, 1, `${label}: one slide shows (stripes at ${stripes})`);
    }
  });
});
