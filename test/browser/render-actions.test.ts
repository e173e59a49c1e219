/**
 * The page actions (styles, scripts, click, scroll_into_view) and fail_on_http_error, checked
 * in the decoded pixels: each changes what it should, refuses what it cannot do with a message
 * naming it, stays within the capture's deadline, and leaves nothing for the next capture on
 * the reused page (the page's own Content-Security-Policy applies again).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  rejectsWith,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const WHITE = [255, 255, 255];
const BLUE = [0, 0, 255];
const GREEN = [0, 255, 0];
const PURPLE = [128, 0, 128];

describe('page actions', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      '/plain': page('<p>plain</p>', '<style>body{background:rgb(255,255,255)}</style>'),
      // Its CSP forbids inline scripts and style elements: its own script would paint it red.
      '/csp': (_req, res) => {
        res
          .writeHead(200, {
            'content-type': 'text/html',
            'content-security-policy': "script-src 'none'; style-src 'none'",
          })
          .end(
            page(
              '<p style="margin:0">csp</p><script>document.body.style.background="rgb(255,0,0)"</script>',
            ),
          );
      },
      '/button': page(
        `<button id="go" style="margin:0">go</button>
         <script>
           document.getElementById('go').addEventListener('click', () => {
             document.body.style.background = 'rgb(0,0,255)';
           });
         </script>`,
        '<style>body{background:rgb(255,255,255)}</style>',
      ),
      '/long': page(
        `<div style="height:2000px;background:rgb(255,255,255)"></div>
         <div id="target" style="height:600px;background:rgb(128,0,128)"></div>
         <div style="height:2000px;background:rgb(255,255,255)"></div>`,
      ),
      '/purple': page('<p>purple</p>', '<style>body{background:rgb(128,0,128)}</style>'),
      '/missing': (_req, res) => {
        res.writeHead(404, { 'content-type': 'text/html' }).end(page('<p>gone</p>'));
      },
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const pixels = async (options: Parameters<TestRenderer['render']>[0], timeoutMs?: number) =>
    decodeImage((await t.render(options, timeoutMs)).image);

  it('styles: added after load, even where the page CSP forbids style elements', async () => {
    const styles = 'html,body{background:rgb(0,0,255)!important}';
    assertColor(await pixels({ url: `${site.origin}/plain`, styles }), 390, 290, BLUE, 'plain');
    assertColor(await pixels({ url: `${site.origin}/csp`, styles }), 390, 290, BLUE, 'csp');
  });

  it('scripts: run after load, awaited when they end with a promise', async () => {
    assertColor(
      await pixels({
        url: `${site.origin}/plain`,
        scripts: 'document.body.style.background = "rgb(0,255,0)"',
      }),
      390,
      290,
      GREEN,
      'sync script',
    );
    assertColor(
      await pixels({
        url: `${site.origin}/csp`,
        scripts: `new Promise((resolve) => setTimeout(() => {
          document.body.style.background = 'rgb(0,0,255)';
          resolve();
        }, 300))`,
      }),
      390,
      290,
      BLUE,
      'awaited script on a CSP page',
    );
  });

  it('gives the page its own CSP back on the next capture that injects nothing', async () => {
    await pixels({ url: `${site.origin}/csp`, scripts: '1', styles: 'p{color:red}' });
    // The page's inline script stays blocked: its background is not red.
    assertColor(await pixels({ url: `${site.origin}/csp` }), 390, 290, WHITE, 'csp again');
  });

  it('scripts: a script that navigates the page captures where it went', async () => {
    const image = await pixels({
      url: `${site.origin}/plain`,
      scripts: 'location.href = "/purple"; new Promise(() => {})',
    });
    assertColor(image, 390, 290, PURPLE, 'the page navigated to');
  });

  it('scripts: an error it throws is a 400 naming it', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/plain`, scripts: 'throw new Error("boom at line one")' }),
      'invalid_request',
      /^scripts threw an error: .*boom at line one/,
    );
  });

  it('scripts: a script that never ends is stopped by the deadline, and the next capture works', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/plain`, scripts: 'while (true) {}' }, 4_000),
      'render_timeout',
    );
    assertColor(await pixels({ url: `${site.origin}/plain` }), 390, 290, WHITE, 'after the spin');
  });

  it('click: the element gets a click event; a selector that matches nothing is a 400', async () => {
    assertColor(
      await pixels({ url: `${site.origin}/button`, click: '#go' }),
      390,
      290,
      BLUE,
      'clicked',
    );
    assertColor(await pixels({ url: `${site.origin}/button` }), 390, 290, WHITE, 'not clicked');
    await rejectsWith(
      t.render({ url: `${site.origin}/button`, click: '#nope' }),
      'invalid_request',
      /^click selector "#nope" matched no element$/,
    );
    await rejectsWith(
      t.render({ url: `${site.origin}/button`, click: '##bad' }),
      'invalid_request',
      /##bad/,
    );
  });

  it('scroll_into_view: the viewport shows the element', async () => {
    const image = await pixels({ url: `${site.origin}/long`, scrollIntoView: '#target' });
    assertColor(image, 10, 10, PURPLE, 'top of the viewport');
    assertColor(image, 390, 290, PURPLE, 'bottom of the viewport');
    assertColor(await pixels({ url: `${site.origin}/long` }), 10, 10, WHITE, 'not scrolled');
    await rejectsWith(
      t.render({ url: `${site.origin}/long`, scrollIntoView: '#nope' }),
      'invalid_request',
      /^scroll_into_view selector "#nope" matched no element$/,
    );
  });

  it('fail_on_http_error: a 404 ends the capture; without it the error page is captured', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/missing`, failOnHttpError: true }),
      'target_error',
      /^the target answered HTTP 404/,
    );
    const result = await t.render({ url: `${site.origin}/missing` });
    assert.equal(result.targetStatus, 404);
    assert.equal(
      (await t.render({ url: `${site.origin}/plain`, failOnHttpError: true })).targetStatus,
      200,
    );
  });
});
