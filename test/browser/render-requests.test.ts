/**
 * The request options as the sites see them: `block_requests` and `block_resources` keep
 * requests from ever reaching a server (the page itself always loads), `headers` and
 * `http_auth` reach the target's own origin and no other (not even through a redirect),
 * `cookies` sit in the jar for the target's host before it loads. Pages are reused between
 * captures: each option is gone from the next capture, of the same client or another.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  renderOptions,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

interface Hit {
  site: 'target' | 'other';
  path: string;
  headers: IncomingMessage['headers'];
}

const RED = solidPng(50, 50, [255, 0, 0]);

describe('request options', () => {
  let target: FixtureSite;
  let other: FixtureSite;
  let t: TestRenderer;
  let hits: Hit[] = [];

  const record = (site: Hit['site'], req: IncomingMessage) => {
    hits.push({ site, path: (req.url ?? '/').split('?')[0] ?? '/', headers: req.headers });
  };

  /**
   * Loads an image, a stylesheet and a script of its own and of the other site, fetches from
   * both, opens a WebSocket and sends a beacon. What it could not load leaves its box white.
   */
  const pageHtml = (otherOrigin: string) =>
    page(
      `<img id="own" src="/img.png" style="display:block;width:50px;height:50px">
       <img id="theirs" src="${otherOrigin}/img.png" style="display:block;width:50px;height:50px">
       <div id="styled" style="width:50px;height:50px"></div>
       <div id="scripted" style="width:50px;height:50px"></div>
       <script src="/ads/banner.js"></script>
       <script src="/app.js"></script>
       <script>
         fetch('/api/own').catch(() => {});
         fetch('${otherOrigin}/api/theirs').catch(() => {});
         try { new WebSocket('ws://' + location.host + '/socket'); } catch {}
         navigator.sendBeacon('/beacon', 'x');
       </script>`,
      '<link rel="stylesheet" href="/style.css">',
    );

  const handlers = (site: Hit['site'], otherOrigin: () => string) => ({
    '/page': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(pageHtml(otherOrigin()));
    },
    '/img.png': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(200, { 'content-type': 'image/png' }).end(RED);
    },
    '/style.css': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(200, { 'content-type': 'text/css' }).end('#styled{background:rgb(0,0,255)}');
    },
    '/app.js': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res
        .writeHead(200, { 'content-type': 'text/javascript' })
        .end("document.getElementById('scripted').style.background = 'rgb(0,128,0)';");
    },
    '/ads/banner.js': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(200, { 'content-type': 'text/javascript' }).end('');
    },
    '/api/own': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(200, { 'access-control-allow-origin': '*' }).end('{}');
    },
    '/api/theirs': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(200, { 'access-control-allow-origin': '*' }).end('{}');
    },
    '/beacon': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(204).end();
    },
    // A redirect to the other site: the hop there must carry nothing of the target's.
    '/go': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(302, { location: `${otherOrigin()}/page` }).end();
    },
    // A subresource that asks for credentials: the capture must not wait on the challenge.
    '/locked.png': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res.writeHead(401, { 'www-authenticate': 'Basic realm="locked"' }).end();
    },
    '/challenged': (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      record(site, req);
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(page(`<img src="${otherOrigin()}/locked.png"><img src="/locked.png">`));
    },
  });

  before(async () => {
    let otherOrigin = '';
    target = await startSite(handlers('target', () => otherOrigin));
    // Another host, not just another port: cookies are per host, whatever the port.
    other = await startSite(
      handlers('other', () => target.origin),
      '127.0.0.2',
    );
    otherOrigin = other.origin;
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await target?.close();
    await other?.close();
  });

  /** WebSocket handshakes the target received (its fixture answers them 404). */
  const sockets = () => target.hits.get('/socket') ?? 0;

  const capture = async (client: string, options: Partial<RenderOptions>, path = '/page') => {
    hits = [];
    const result = await t.renderer.render(
      renderOptions({ url: `${target.origin}${path}`, ...options }),
      { deadline: Date.now() + 30_000, client: { id: client, maxConcurrent: 1 } },
    );
    return { result, image: decodeImage(result.image), hits: [...hits] };
  };
  const paths = (list: Hit[], site: Hit['site']) =>
    list
      .filter((h) => h.site === site)
      .map((h) => h.path)
      .sort();

  it('loads everything without the options (the baseline the others are measured on)', async () => {
    const before = sockets();
    const { image, hits } = await capture('a', {});
    assert.equal(sockets(), before + 1, 'the page opened its WebSocket');
    assert.deepEqual(paths(hits, 'target'), [
      '/ads/banner.js',
      '/api/own',
      '/app.js',
      '/beacon',
      '/img.png',
      '/page',
      '/style.css',
    ]);
    assert.deepEqual(paths(hits, 'other'), ['/api/theirs', '/img.png']);
    assertColor(image, 25, 25, [255, 0, 0], 'own image');
    assertColor(image, 25, 75, [255, 0, 0], 'their image');
    assertColor(image, 25, 125, [0, 0, 255], 'stylesheet');
    assertColor(image, 25, 175, [0, 128, 0], 'script');
  });

  it('block_resources: no request of those kinds reaches any site', async () => {
    const before = sockets();
    const { image, hits } = await capture('a', {
      blockResources: ['image', 'stylesheet', 'fetch', 'other', 'websocket'],
    });
    assert.equal(sockets(), before, 'no WebSocket handshake');
    assert.deepEqual(paths(hits, 'target'), ['/ads/banner.js', '/app.js', '/page']);
    assert.deepEqual(paths(hits, 'other'), []);
    assertColor(image, 25, 25, [255, 255, 255], 'own image blocked');
    assertColor(image, 25, 125, [255, 255, 255], 'stylesheet blocked');
    assertColor(image, 25, 175, [0, 128, 0], 'the script still ran');
  });

  it('block_requests: matching URLs are not requested; the page itself always is', async () => {
    const before = sockets();
    const { image, hits } = await capture('a', {
      blockRequests: ['*/ads/*', `${other.origin}/*`, `${target.origin}/page*`, '*/socket'],
    });
    assert.equal(sockets(), before, 'the WebSocket matched a pattern');
    assert.deepEqual(paths(hits, 'target'), [
      '/api/own',
      '/app.js',
      '/beacon',
      '/img.png',
      '/page',
      '/style.css',
    ]);
    assert.deepEqual(paths(hits, 'other'), []);
    assertColor(image, 25, 25, [255, 0, 0], 'own image');
    assertColor(image, 25, 75, [255, 255, 255], 'their image blocked');
  });

  it("headers and http_auth reach the target's origin only, not through a redirect", async () => {
    const auth = `Basic ${Buffer.from('ann:s3cr:t é').toString('base64')}`;
    const options = {
      headers: [{ name: 'X-Shot-Token', value: 'tok-1' }],
      httpAuth: { username: 'ann', password: 's3cr:t é' },
    };
    const { hits } = await capture('a', options);
    const own = hits.filter((h) => h.site === 'target');
    assert.ok(own.length >= 6);
    for (const h of own) {
      assert.equal(h.headers['x-shot-token'], 'tok-1', h.path);
      assert.equal(h.headers.authorization, auth, h.path);
    }
    const theirs = hits.filter((h) => h.site === 'other');
    assert.deepEqual(theirs.map((h) => h.path).sort(), ['/api/theirs', '/img.png']);
    for (const h of theirs) {
      assert.equal(h.headers['x-shot-token'], undefined, h.path);
      assert.equal(h.headers.authorization, undefined, h.path);
    }
    const redirected = await capture('a', options, '/go');
    const hop = redirected.hits.find((h) => h.site === 'other' && h.path === '/page');
    assert.ok(hop, 'the redirect was followed');
    assert.equal(hop.headers['x-shot-token'], undefined);
    assert.equal(hop.headers.authorization, undefined);
    assert.equal(redirected.hits.find((h) => h.path === '/go')?.headers['x-shot-token'], 'tok-1');
  });

  it('a credentials challenge on a subresource does not hold the capture', async () => {
    const started = Date.now();
    const { result, hits } = await capture(
      'a',
      { httpAuth: { username: 'ann', password: 'pw' } },
      '/challenged',
    );
    assert.equal(result.targetStatus, 200);
    assert.ok(Date.now() - started < 20_000);
    assert.ok(hits.some((h) => h.site === 'other' && h.path === '/locked.png'));
    const mine = hits.find((h) => h.site === 'target' && h.path === '/locked.png');
    assert.ok(mine?.headers.authorization?.startsWith('Basic '));
  });

  it("cookies are in the jar for the target's host, and sent nowhere else", async () => {
    const { hits } = await capture('a', {
      cookies: [
        {
          name: 'session',
          value: 'abc 1',
          domain: null,
          path: '/',
          secure: false,
          httpOnly: true,
          sameSite: 'Lax',
        },
        {
          name: 'scoped',
          value: 'api',
          domain: null,
          path: '/api',
          secure: false,
          httpOnly: false,
          sameSite: null,
        },
      ],
    });
    const cookieOf = (site: Hit['site'], path: string) =>
      hits.find((h) => h.site === site && h.path === path)?.headers.cookie;
    assert.equal(cookieOf('target', '/page'), 'session=abc 1');
    assert.equal(cookieOf('target', '/api/own'), 'scoped=api; session=abc 1');
    assert.equal(cookieOf('other', '/api/theirs'), undefined);
    assert.equal(cookieOf('other', '/img.png'), undefined);
  });

  it('leaves nothing of them for the next capture, of the same client or another', async () => {
    await capture('a', {
      blockResources: ['image', 'websocket'],
      blockRequests: ['*'],
      headers: [{ name: 'X-Shot-Token', value: 'leak' }],
      httpAuth: { username: 'leak', password: 'leak' },
      cookies: [
        {
          name: 'leak',
          value: '1',
          domain: null,
          path: '/',
          secure: false,
          httpOnly: false,
          sameSite: null,
        },
      ],
    });
    for (const client of ['a', 'b']) {
      const before = sockets();
      const { image, hits } = await capture(client, {});
      assert.equal(sockets(), before + 1, `${client}: WebSockets open again`);
      assert.equal(paths(hits, 'target').length, 7, client);
      for (const h of hits) {
        assert.equal(h.headers['x-shot-token'], undefined, `${client} ${h.path}`);
        assert.equal(h.headers.authorization, undefined, `${client} ${h.path}`);
        assert.equal(h.headers.cookie, undefined, `${client} ${h.path}`);
      }
      assertColor(image, 25, 25, [255, 0, 0], `${client}: images load again`);
    }
  });
});

/**
 * With request interception on, Chromium pauses a web font twice, and puppeteer's second
 * request object never gets a finished event (puppeteer issue 11641). Counted by object, the
 * font stayed "in flight" and every such capture waited for the settle cap (2 s more on the
 * benchmark's page). With the cap raised past the deadline, that would be a timeout.
 */
describe('request options: a web font under interception', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  before(async () => {
    const font = readFileSync(join(import.meta.dirname, '../../bench/fixtures/realistic/font.ttf'));
    site = await startSite({
      '/page': page('<p>Text in a web font</p>', '<link rel="stylesheet" href="/style.css">'),
      '/style.css': (_req, res) => {
        res
          .writeHead(200, { 'content-type': 'text/css' })
          .end(
            '@font-face{font-family:"Web";src:url("/font.ttf") format("truetype");font-display:block}' +
              'body{font-family:"Web",sans-serif}',
          );
      },
      '/font.ttf': (_req, res) => {
        res.writeHead(200, { 'content-type': 'font/ttf' }).end(font);
      },
    });
    t = await startRenderer({ concurrency: 1, networkQuietCapMs: 120_000 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('settles once the font has loaded, interception on or off', async () => {
    for (const blockRequests of [[], ['*nothing-matches*'], ['*nothing-matches*']]) {
      const result = await t.renderer.render(
        renderOptions({ url: `${site.origin}/page`, blockRequests }),
        { deadline: Date.now() + 30_000, client: { id: 'a', maxConcurrent: 1 } },
      );
      assert.equal(result.targetStatus, 200);
    }
  });
});
