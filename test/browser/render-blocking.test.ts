/**
 * block_ads, block_trackers and block_cookie_banners, as the sites see them and in decoded
 * pixels. The filter lists are the shipped EasyList and EasyPrivacy snapshots; the ad and
 * tracker URLs below are matched by their generic rules (checked against the snapshot, see
 * the paths), served by a second loopback host as a third party. The consent banners are
 * made the way two real consent managers (CookieYes and Complianz) make theirs, so
 * autoconsent's rules for those managers find them.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  near,
  renderOptions,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

const RED = [255, 0, 0];
const MAGENTA = [255, 0, 255];
const GREEN = [0, 128, 0];
const WHITE = [255, 255, 255];

/** EasyList: "-300x250_" (an ad image size) and "/jquery.popunder.js". */
const AD_PATHS = ['/static/promo-300x250_.png', '/js/jquery.popunder.js'];
/** EasyPrivacy: "/piwik." and the analytics "/collect?v=" beacon. */
const TRACKER_PATHS = ['/piwik.js', '/collect'];

describe('blocking options', () => {
  let target: FixtureSite;
  let third: FixtureSite;
  let t: TestRenderer;
  let seen: string[] = [];
  const consent: string[] = [];

  const send =
    (type: string, body: string | Buffer) => (req: IncomingMessage, res: ServerResponse) => {
      seen.push(
        `${req.headers.host?.startsWith('127.0.0.2') ? 'third' : 'own'} ${(req.url ?? '').split('?')[0]}`,
      );
      res.writeHead(200, { 'content-type': type }).end(body);
    };

  /** Own content (a green image, a script) beside an ad slot, an ad image, an ad script, trackers. */
  const adPage = (thirdOrigin: string) =>
    page(
      `<img src="/logo.png" style="display:block;width:50px;height:50px">
       <img src="${thirdOrigin}${AD_PATHS[0]}" style="display:block;width:50px;height:50px">
       <div class="ad-slot" style="width:50px;height:50px;background:rgb(255,0,255)"></div>
       <div id="scripted" style="width:50px;height:50px"></div>
       <img src="${thirdOrigin}/collect?v=1&tid=UA-1" style="display:none">
       <script src="${thirdOrigin}${AD_PATHS[1]}"></script>
       <script src="${thirdOrigin}/piwik.js"></script>
       <script src="/app.js"></script>`,
    );

  /** A fixed red banner at the bottom; its buttons report the choice and remove it. */
  const banner = (container: string, accept: string, reject: string, cmp: string) =>
    page(
      `<p>content</p>
       ${container}${accept}${reject}</div>
       <script>
         for (const [sel, choice] of [['.accept-it', 'accept'], ['.reject-it', 'reject']]) {
           document.querySelector(sel).addEventListener('click', () => {
             fetch('/consent?cmp=${cmp}&choice=' + choice);
             document.querySelector('.banner-root').remove();
           });
         }
       </script>`,
    );
  const BANNER_STYLE =
    'position:fixed;left:0;right:0;bottom:0;height:80px;background:rgb(255,0,0);z-index:10';

  before(async () => {
    let thirdOrigin = '';
    target = await startSite(
      {
        '/ads': (_req, res) => {
          seen.push('own /ads');
          res.writeHead(200, { 'content-type': 'text/html' }).end(adPage(thirdOrigin));
        },
        '/logo.png': send('image/png', solidPng(50, 50, [0, 128, 0])),
        '/app.js': send(
          'text/javascript',
          "document.getElementById('scripted').style.background = 'rgb(0,128,0)';",
        ),
        '/cookieyes': banner(
          `<div class="cky-consent-container banner-root" style="${BANNER_STYLE}">`,
          '<button class="accept-it" data-cky-tag="accept-button">Accept all</button>',
          '<button class="reject-it" data-cky-tag="reject-button">Reject all</button>',
          'cookieyes',
        ),
        '/complianz': banner(
          `<div class="cc-window cc-type-opt-in banner-root" aria-describedby="cookieconsent:desc" style="${BANNER_STYLE}"><span id="cookieconsent:desc">We use cookies.</span>`,
          '<a class="cc-btn cc-allow accept-it" role="button">Allow</a>',
          '<a class="cc-btn cc-deny reject-it" role="button">Deny</a>',
          'complianz',
        ),
        '/plain': page('<p>no banner here</p>'),
        '/consent': (req, res) => {
          consent.push(new URL(req.url ?? '/', 'http://x').search);
          res.writeHead(204).end();
        },
        // Not 127.0.0.1: EasyList turns its element hiding off there (`@@://127.0.0.1$generichide`,
        // for developers' own servers).
      },
      '127.0.0.3',
    );
    third = await startSite(
      {
        [AD_PATHS[0] as string]: send('image/png', solidPng(50, 50, [255, 0, 0])),
        [AD_PATHS[1] as string]: send('text/javascript', ''),
        '/piwik.js': send('text/javascript', ''),
        '/collect': send('image/gif', ''),
      },
      '127.0.0.2',
    );
    thirdOrigin = third.origin;
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await target?.close();
    await third?.close();
  });

  const capture = async (client: string, path: string, options: Partial<RenderOptions>) => {
    seen = [];
    const started = Date.now();
    const result = await t.renderer.render(
      renderOptions({ url: `${target.origin}${path}`, ...options }),
      { deadline: Date.now() + 30_000, client: { id: client, maxConcurrent: 1 } },
    );
    return { image: decodeImage(result.image), seen: [...seen].sort(), ms: Date.now() - started };
  };
  const own = ['own /ads', 'own /app.js', 'own /logo.png'];
  const ads = AD_PATHS.map((p) => `third ${p}`);
  const trackers = TRACKER_PATHS.map((p) => `third ${p}`);

  it('without the flags the page loads its ads and trackers (the baseline)', async () => {
    const { image, seen } = await capture('a', '/ads', {});
    assert.deepEqual(seen, [...own, ...ads, ...trackers].sort());
    assertColor(image, 25, 75, RED, 'ad image');
    assertColor(image, 25, 125, MAGENTA, 'ad slot');
  });

  it('block_ads: no ad request is made, the ad slot is hidden, the page is whole', async () => {
    const { image, seen } = await capture('a', '/ads', { blockAds: true });
    assert.deepEqual(seen, [...own, ...trackers].sort());
    assertColor(image, 25, 25, GREEN, 'own image');
    // The slot is hidden (display:none): what was below it moves up; the blocked image keeps
    // its box, empty.
    for (let y = 0; y < 300; y += 5) {
      assert.ok(!near(image.at(25, y), MAGENTA), `the ad slot is hidden (y ${y})`);
      assert.ok(!near(image.at(25, y), RED), `no ad image (y ${y})`);
    }
    assertColor(image, 25, 125, GREEN, 'the script ran');
  });

  it('block_trackers: no tracker request is made, ads still load', async () => {
    const { image, seen } = await capture('a', '/ads', { blockTrackers: true });
    assert.deepEqual(seen, [...own, ...ads].sort());
    assertColor(image, 25, 75, RED, 'ad image');
  });

  it('both at once, then nothing of them for the next capture of either client', async () => {
    const both = await capture('a', '/ads', { blockAds: true, blockTrackers: true });
    assert.deepEqual(both.seen, own);
    for (const client of ['a', 'b']) {
      const { image, seen } = await capture(client, '/ads', {});
      assert.deepEqual(seen, [...own, ...ads, ...trackers].sort(), client);
      assertColor(image, 25, 125, MAGENTA, `${client}: the slot shows again`);
    }
  });

  for (const cmp of ['cookieyes', 'complianz']) {
    it(`block_cookie_banners: a ${cmp} banner is refused and gone from the image`, async () => {
      const plain = await capture('a', `/${cmp}`, {});
      assertColor(plain.image, 200, 280, RED, 'the banner without the option');
      consent.length = 0;
      const { image } = await capture('a', `/${cmp}`, { blockCookieBanners: true });
      for (let x = 5; x < 400; x += 20) assertColor(image, x, 280, WHITE, 'no banner');
      assert.deepEqual(consent, [`?cmp=${cmp}&choice=reject`], 'consent refused, never given');
    });
  }

  it('a page without a banner is captured within the consent budget, and the next without it', async () => {
    const { ms } = await capture('a', '/plain', { blockCookieBanners: true });
    assert.ok(ms < 15_000, `${ms} ms`);
    console.log(`a capture of a page without a banner, with block_cookie_banners: ${ms} ms`);
    const again = await capture('a', '/cookieyes', {});
    assertColor(again.image, 200, 280, RED, 'autoconsent is gone from the next capture');
  });
});
