/**
 * What no reset of a browser context clears, its HTTP authentication cache and its open
 * sockets, never reaches another client's capture: a context that rendered for one client
 * renders only for that client again (DECISIONS.md section 11, "Isolation").
 *
 * One slot and one page per slot, so that without the rule every capture would run in the
 * same context.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

/** Plants user:secret for the realm in the context's HTTP authentication cache. */
const PLANT = page(
  '',
  `<script>
     const xhr = new XMLHttpRequest();
     xhr.open('GET', '/protected?plant', true, 'user', 'secret');
     xhr.onloadend = () => { document.body.dataset.done = String(xhr.status); };
     xhr.send();
   </script>`,
);

/**
 * Asks for the realm with no credentials of its own, by fetch and as an image, after the load
 * event: without cached credentials the challenge stays unanswered (headless Chromium has no
 * one to ask), so the fetch is given up after a while.
 */
const PROBE = page(
  '',
  `<script>
     addEventListener('load', () => {
       const img = new Image();
       img.src = '/protected?img';
       document.body.append(img);
       const controller = new AbortController();
       setTimeout(() => controller.abort(), 1500);
       fetch('/protected?fetch', { signal: controller.signal })
         .then((r) => String(r.status), () => 'aborted')
         .then((status) => { document.body.dataset.done = status; });
     });
   </script>`,
);

interface Seen {
  path: string;
  authorization: string | undefined;
  remotePort: number | undefined;
}

describe('isolation between clients: HTTP auth cache and sockets', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  const seen: Seen[] = [];

  const record = (req: IncomingMessage): void => {
    seen.push({
      path: req.url ?? '',
      authorization: req.headers.authorization,
      remotePort: req.socket.remotePort,
    });
  };

  before(async () => {
    const good = `Basic ${Buffer.from('user:secret').toString('base64')}`;
    site = await startSite({
      '/plant': (req: IncomingMessage, res: ServerResponse) => {
        record(req);
        res.writeHead(200, { 'content-type': 'text/html' }).end(PLANT);
      },
      '/probe': (req: IncomingMessage, res: ServerResponse) => {
        record(req);
        res.writeHead(200, { 'content-type': 'text/html' }).end(PROBE);
      },
      '/plain': (req: IncomingMessage, res: ServerResponse) => {
        record(req);
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(page('<img src="/pixel.svg"><script>document.body.dataset.done = "1";</script>'));
      },
      '/pixel.svg': (req: IncomingMessage, res: ServerResponse) => {
        record(req);
        res
          .writeHead(200, { 'content-type': 'image/svg+xml' })
          .end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
      },
      '/protected': (req: IncomingMessage, res: ServerResponse) => {
        record(req);
        if (req.headers.authorization === good) {
          res
            .writeHead(200, { 'content-type': 'image/svg+xml' })
            .end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
          return;
        }
        res
          .writeHead(401, {
            'www-authenticate': 'Basic realm="members"',
            'content-type': 'text/plain',
          })
          .end('who are you?');
      },
    });
    t = await startRenderer({ concurrency: 1, pagesPerSlot: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (path: string, client: string) =>
    t.renderer.render(
      renderOptions({ url: `${site.origin}${path}`, waitForSelector: 'body[data-done]' }),
      { deadline: Date.now() + 20_000, client: { id: client, maxConcurrent: 1 } },
    );

  it("another client's capture sends none of the credentials one client planted", async () => {
    seen.length = 0;
    await capture('/plant', 'user:1');
    // The credentials were really planted: the challenge was answered with them.
    const planted = seen.filter((s) => s.path.startsWith('/protected'));
    assert.ok(
      planted.some((s) => s.authorization !== undefined),
      `A's XHR authenticated: ${JSON.stringify(planted)}`,
    );
    // The same client again: its own context, auth cache included, is reused.
    seen.length = 0;
    await capture('/probe', 'user:1');
    const again = seen.filter((s) => s.path.startsWith('/protected'));
    assert.ok(
      again.some((s) => s.authorization !== undefined),
      `the same client keeps its context: ${JSON.stringify(again)}`,
    );

    seen.length = 0;
    await capture('/probe', 'user:2');
    const probes = seen.filter((s) => s.path.startsWith('/protected'));
    assert.ok(probes.length >= 2, `B asked for the realm: ${JSON.stringify(seen)}`);
    assert.deepEqual(
      probes.map((s) => s.authorization),
      probes.map(() => undefined),
      `B's requests carried no Authorization: ${JSON.stringify(probes)}`,
    );
  });

  it("another client's capture never gets a connection one client opened", async () => {
    seen.length = 0;
    await capture('/plain', 'user:3');
    const portsOfA = new Set(seen.map((s) => s.remotePort));
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    // Straight after, while the fixture still keeps A's connections open.
    seen.length = 0;
    await capture('/plain', 'user:4');
    assert.ok(seen.length >= 2, JSON.stringify(seen));
    for (const s of seen) {
      assert.ok(!portsOfA.has(s.remotePort), `B reused A's connection: ${JSON.stringify(s)}`);
    }
  });
});
