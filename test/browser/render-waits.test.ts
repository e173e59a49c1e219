/**
 * The wait options: wait_until (load, domcontentloaded, networkidle0, networkidle2), delay and
 * wait_for_selector, each against a page built so that only the right wait shows the content.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  rejectsWith,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const WHITE = [255, 255, 255];
const GREEN = [0, 200, 0];

const delayed =
  (ms: number, write: (res: ServerResponse) => void) => (_req: unknown, res: ServerResponse) => {
    const timer = setTimeout(() => write(res), ms);
    res.on('close', () => clearTimeout(timer));
  };

const ROUTES = {
  // The image arrives 4 s after the document.
  '/slow-image': page(
    '<img src="/slow.png" width="100" height="100" style="display:block">',
    '<style>body{background:#fff}</style>',
  ),
  '/slow.png': delayed(4_000, (res) =>
    res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(100, 100, [0, 200, 0])),
  ),
  // After load, a fetch that takes longer than the settle cap paints the page green.
  '/late-data': page(
    '',
    `<style>body{background:#fff}</style>
     <script>addEventListener('load', () => fetch('/data').then(r => r.text()).then(() => {
       document.body.style.background = 'rgb(0,200,0)';
     }));</script>`,
  ),
  '/data': delayed(2_600, (res) => res.writeHead(200).end('ok')),
  // From the load handler, two chained quick fetches with a pause between them longer than the
  // short quiet window (NETWORK_QUIET_MS) but shorter than the long one, then the page paints:
  // the first fetch is in flight at the load event, so the page counts as fetching on its own.
  '/chained': page(
    '',
    `<style>body{background:#fff}</style>
     <script>addEventListener('load', async () => {
       await (await fetch('/quick?1')).text();
       await new Promise((r) => setTimeout(r, 100));
       await (await fetch('/quick?2')).text();
       document.body.style.background = 'rgb(0,200,0)';
     });</script>`,
  ),
  '/quick': delayed(150, (res) => res.writeHead(200).end('ok')),
  // A fetch started 30 ms after load, past the part of the quiet window waited before the image
  // (NETWORK_QUIET_EARLY_MS), then the page paints: the image taken early is not kept.
  '/just-after-load': page(
    '',
    `<style>body{background:#fff}</style>
     <script>addEventListener('load', () => setTimeout(async () => {
       await (await fetch('/quick?3')).text();
       document.body.style.background = 'rgb(0,200,0)';
     }, 30));</script>`,
  ),
  // Two requests that never finish: networkidle2 settles, networkidle0 never does.
  '/long-poll': page(
    '<p>polling</p>',
    `<style>body{background:rgb(0,200,0)}</style>
     <script>fetch('/hang?1'); fetch('/hang?2');</script>`,
  ),
  '/hang': () => {},
  '/timer': page(
    '',
    `<style>body{background:#fff}</style>
     <script>setTimeout(() => { document.body.style.background = 'rgb(0,200,0)'; }, 4000);</script>`,
  ),
  '/appears': page(
    '',
    `<style>body{background:#fff} #late{width:100%;height:100%;position:fixed;inset:0;background:rgb(0,200,0)}</style>
     <script>setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; document.body.append(d); }, 1000);</script>`,
  ),
};

describe('renderer wait options', () => {
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

  it('load waits for the slow image; domcontentloaded does not', async () => {
    const url = `${site.origin}/slow-image`;
    const early = await t.render({ url, waitUntil: 'domcontentloaded' });
    assert.ok(early.renderMs < 2_500, `domcontentloaded took ${early.renderMs} ms`);
    assertColor(decodeImage(early.image), 50, 50, WHITE, 'image not there yet');
    const loaded = await t.render({ url, waitUntil: 'load' });
    assert.ok(loaded.renderMs >= 3_500, `load took only ${loaded.renderMs} ms`);
    assertColor(decodeImage(loaded.image), 50, 50, GREEN, 'image loaded');
  });

  it('load settles for requests the page makes after load (chained ones too)', async () => {
    const result = await t.render({ url: `${site.origin}/chained` });
    assertColor(decodeImage(result.image), 200, 150, GREEN, 'data fetched after load rendered');
  });

  it('a fetch started within the quiet window, after the image began, has it taken again', async () => {
    for (let i = 0; i < 3; i++) {
      const result = await t.render({ url: `${site.origin}/just-after-load?${i}` });
      assertColor(decodeImage(result.image), 200, 150, GREEN, `fetch after load rendered (${i})`);
    }
  });

  it('networkidle0 waits for a late fetch that load (and its bounded settle) does not', async () => {
    const url = `${site.origin}/late-data`;
    const onLoad = await t.render({ url, waitUntil: 'load' });
    assertColor(decodeImage(onLoad.image), 200, 150, WHITE, 'load: data not there yet');
    const idle = await t.render({ url, waitUntil: 'networkidle0' });
    assertColor(decodeImage(idle.image), 200, 150, GREEN, 'networkidle0: data rendered');
  });

  it('networkidle2 tolerates two open connections; networkidle0 times out on them', async () => {
    const url = `${site.origin}/long-poll`;
    const two = await t.render({ url, waitUntil: 'networkidle2' });
    assertColor(decodeImage(two.image), 200, 150, GREEN, 'networkidle2 page');
    const started = Date.now();
    await rejectsWith(
      t.render({ url, waitUntil: 'networkidle0' }, 2_500),
      'render_timeout',
      /loading the page/,
    );
    assert.ok(Date.now() - started < 6_000, 'ended at the deadline');
  });

  it('delay waits before capturing', async () => {
    const url = `${site.origin}/timer`;
    // The timer is due well after the settle wait's bound (2 s): only a delay waits for it.
    const now = await t.render({ url });
    assertColor(decodeImage(now.image), 200, 150, WHITE, 'without delay');
    const later = await t.render({ url, delay: 4_200 });
    assertColor(decodeImage(later.image), 200, 150, GREEN, 'after the delay');
    assert.ok(later.renderMs >= 4_200);
  });

  it('wait_for_selector waits for the element to appear', async () => {
    const result = await t.render({ url: `${site.origin}/appears`, waitForSelector: '#late' });
    assertColor(decodeImage(result.image), 200, 150, GREEN, 'element rendered');
  });

  it('wait_for_selector that never matches ends at the deadline, naming the selector', async () => {
    const started = Date.now();
    await rejectsWith(
      t.render({ url: `${site.origin}/appears`, waitForSelector: '#never' }, 2_000),
      'render_timeout',
      /selector "#never"/,
    );
    assert.ok(Date.now() - started < 6_000, 'ended at the deadline');
  });
});
