/**
 * Targets that fail and pages that fight back. Every case must end by its deadline with the
 * right error code and leave the renderer able to render the next page.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../src/domain/errors.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { chromiumProcesses, rejectsWith, startRenderer, type TestRenderer } from './helpers.ts';

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

const redirect = (location: string) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(302, { location }).end();
};

describe('renderer failures and hostile pages', () => {
  let site: FixtureSite;
  let other: FixtureSite;
  let t: TestRenderer;
  const checked: string[] = [];

  before(async () => {
    other = await startSite({ '/': page('<p>other</p>') }, '127.0.0.2');
    site = await startSite({
      '/ok': page('<p>fine</p>'),
      '/reset': (req) => {
        req.socket.destroy();
      },
      '/loop': redirect('/loop'),
      '/to-file': redirect('file:///etc/passwd'),
      '/to-data': redirect('data:text/html,<p>hi</p>'),
      '/to-javascript': redirect('javascript:alert(1)'),
      '/to-mailto': redirect('mailto:someone@example.com'),
      '/to-ftp': redirect('ftp://127.0.0.1/file'),
      '/to-chrome': redirect('chrome://version'),
      '/to-other': redirect(`${other.origin}/`),
      '/download': (_req, res) => {
        res
          .writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="report.bin"',
          })
          .end(Buffer.alloc(1024, 1));
      },
      '/download-link': page(
        '<a id="dl" href="/download" download>get</a><script>document.getElementById("dl").click()</script><p>page</p>',
      ),
      '/alerts': page(`<script>for (;;) { alert('a'); confirm('b'); prompt('c'); }</script>`),
      '/alerts-after-load': page(
        `<p>x</p><script>addEventListener('load', () => setInterval(() => alert('hi'), 5));</script>`,
      ),
      '/busy': page('<script>while (true) {}</script>'),
      '/busy-after-load': page(
        `<p>x</p><script>addEventListener('load', () => { while (true) {} });</script>`,
      ),
      '/popups': page(
        `<p>popups</p><a id="a" href="/popup-target?link" target="_blank">x</a>
         <script>
           for (let i = 0; i < 50; i++) window.open('/popup-target?' + i, '_blank');
           window.open('/popup-target?noopener', '_blank', 'noopener');
           document.getElementById('a').click();
         </script>`,
      ),
      '/popup-target': page('<p>popup</p>'),
      '/huge': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        const row = '<p style="margin:0;height:20px">row of a very long page</p>';
        res.end(page(row.repeat(10_000)));
      },
      '/slow-doc': (_req, res) => {
        const timer = setTimeout(() => res.writeHead(200).end(page('late')), 5_000);
        res.on('close', () => clearTimeout(timer));
      },
    });
    t = await startRenderer({
      checkNavigation: async (url) => {
        checked.push(url.href);
        if (url.hostname === '127.0.0.2') {
          throw new AppError('url_not_allowed', `${url.hostname} is not an allowed target`);
        }
      },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await other?.close();
  });

  /** The renderer still works, promptly. */
  async function healthy(): Promise<void> {
    const result = await t.render({ url: `${site.origin}/ok` }, 10_000);
    assert.equal(result.targetStatus, 200);
  }

  it('connection refused is target_unreachable naming the host', async () => {
    const port = await closedPort();
    await rejectsWith(
      t.render({ url: `http://127.0.0.1:${port}/` }),
      'target_unreachable',
      new RegExp(`could not reach 127\\.0\\.0\\.1:${port}: connection refused`),
    );
  });

  it('a connection reset or dropped by the target is target_unreachable', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/reset` }),
      'target_unreachable',
      /could not reach/,
    );
  });

  it('a TLS failure is target_unreachable', async () => {
    await rejectsWith(
      t.render({ url: `https://127.0.0.1:${site.port}/ok` }),
      'target_unreachable',
      /TLS|SSL/,
    );
  });

  it('a redirect loop is target_unreachable (too many redirects)', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/loop` }),
      'target_unreachable',
      /too many redirects/,
    );
    await healthy();
  });

  for (const target of ['file', 'data', 'javascript', 'mailto', 'ftp', 'chrome']) {
    it(`a main-document redirect to ${target}: is url_not_allowed`, async () => {
      await rejectsWith(t.render({ url: `${site.origin}/to-${target}` }), 'url_not_allowed');
    });
  }

  it('every main-document hop goes through checkNavigation; a refused hop is url_not_allowed', async () => {
    checked.length = 0;
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/to-other` }),
      'url_not_allowed',
      /127\.0\.0\.2 is not an allowed target/,
    );
    assert.ok(err);
    assert.deepEqual(checked, [`${site.origin}/to-other`, `${other.origin}/`]);
    await healthy();
  });

  it('an attachment is not a page: target_unreachable, and the pool carries on', async () => {
    await rejectsWith(
      t.render({ url: `${site.origin}/download` }),
      'target_unreachable',
      /download/,
    );
    await healthy();
  });

  it('a download link on a page is denied and the page renders', async () => {
    const result = await t.render({ url: `${site.origin}/download-link` });
    assert.equal(result.targetStatus, 200);
  });

  it('an alert loop before load ends at the deadline; the pool stays healthy', async () => {
    const started = Date.now();
    await rejectsWith(t.render({ url: `${site.origin}/alerts` }, 3_000), 'render_timeout');
    assert.ok(Date.now() - started < 7_000, `took ${Date.now() - started} ms`);
    await healthy();
  });

  it('dialogs after load are dismissed and the page renders', async () => {
    const result = await t.render({ url: `${site.origin}/alerts-after-load` }, 10_000);
    assert.equal(result.targetStatus, 200);
    await healthy();
  });

  for (const path of ['/busy', '/busy-after-load']) {
    it(`an endless script (${path}) ends at the deadline and its renderer goes away`, async () => {
      await healthy();
      await sleep(500);
      const before = chromiumProcesses(t.dataDir).length;
      const started = Date.now();
      await rejectsWith(t.render({ url: `${site.origin}${path}` }, 3_000), 'render_timeout');
      assert.ok(Date.now() - started < 7_000, `took ${Date.now() - started} ms`);
      await healthy();
      // The hung renderer process is gone (its context was thrown away), not left spinning.
      let now = chromiumProcesses(t.dataDir).length;
      for (let i = 0; i < 50 && now > before; i++) {
        await sleep(100);
        now = chromiumProcesses(t.dataDir).length;
      }
      assert.ok(now <= before, `chromium processes: ${before} before, ${now} after`);
    });
  }

  it('50 popups open nothing and the page renders', async () => {
    const hitsBefore = site.hits.get('/popup-target') ?? 0;
    const result = await t.render({ url: `${site.origin}/popups` });
    assert.equal(result.targetStatus, 200);
    await sleep(300);
    assert.equal(site.hits.get('/popup-target') ?? 0, hitsBefore, 'no popup was loaded');
    await healthy();
  });

  it('a huge page renders full page within its deadline, cut and marked truncated', async () => {
    const result = await t.render(
      { url: `${site.origin}/huge`, fullPage: true, width: 300, height: 1_000 },
      30_000,
    );
    assert.equal(result.truncated, true);
    assert.equal(result.height, 16_384);
    await healthy();
  });

  it('a target slower than the deadline is render_timeout', async () => {
    const started = Date.now();
    await rejectsWith(
      t.render({ url: `${site.origin}/slow-doc` }, 1_500),
      'render_timeout',
      /while loading the page/,
    );
    assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
    await healthy();
  });
});
