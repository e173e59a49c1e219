/**
 * The two engines (docs/engine.md): the headless shell, the default, and the full browser, the
 * fallback. On each, through the real renderer:
 * - a capture presents as the Chrome it is: the User-Agent of every request (the page, a
 *   subresource, a cross-site frame, a worker's fetch), navigator.userAgent and
 *   navigator.userAgentData in the page, its frame and its worker, and the Sec-CH-UA client
 *   hints all name Chrome with the engine's real version, never HeadlessChrome;
 * - a preset's user agent still wins, with client hints that match it or none;
 * - an HTTP authentication challenge (a subresource, a cross-site frame, the document itself)
 *   never holds the capture: the shell cancels it by itself, the full browser through our
 *   per-request pause;
 * - both ask for US English (the shell alone would send no Accept-Language);
 * - a PDF target: the full browser shows it in its viewer, the shell (no viewer) refuses it
 *   with a message that says why.
 * And our GREASE brand is the one the engine makes itself (the full browser, nothing
 * overridden, read with plain puppeteer).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type Browser, launch } from 'puppeteer-core';
import { chromiumArgs } from '../../src/adapters/browser/process/chromium-flags.ts';
import { chromiumBrands } from '../../src/adapters/browser/process/engine.ts';
import {
  findChromium,
  launchableBinary,
} from '../../src/adapters/browser/process/find-chromium.ts';
import { DEVICES } from '../../src/domain/captures/devices.ts';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import type { AppError } from '../../src/domain/errors.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** A one-page PDF with nothing on it. */
const MINIMAL_PDF = [
  '%PDF-1.4',
  '1 0 obj <</Type /Catalog /Pages 2 0 R>> endobj',
  '2 0 obj <</Type /Pages /Kids [3 0 R] /Count 1>> endobj',
  '3 0 obj <</Type /Page /Parent 2 0 R /MediaBox [0 0 200 200]>> endobj',
  'trailer <</Root 1 0 R>>',
  '%%EOF',
].join('\n');

const ENGINES = [
  { engine: 'shell', path: '/usr/bin/chromium-headless-shell' },
  { engine: 'full', path: '/usr/bin/chromium' },
] as const;

type Report = Record<
  'page' | 'frame' | 'worker',
  { ua: string; brands: string[]; languages: string[]; platform: string; full: string[] }
>;

interface Seen {
  path: string;
  languages: string | undefined;
  ua: string | undefined;
  brands: string | undefined;
  platform: string | undefined;
  mobile: string | undefined;
}

/** What the page, its cross-site frame and its worker report, written into the title. */
const REPORT = `
  async function report() {
    const d = navigator.userAgentData;
    return {
      ua: navigator.userAgent,
      brands: d ? d.brands.map((b) => b.brand + '/' + b.version) : null,
      languages: navigator.languages,
      platform: d ? d.platform : null,
      full: d ? (await d.getHighEntropyValues(['fullVersionList'])).fullVersionList
        .map((b) => b.brand + '/' + b.version) : null,
    };
  }`;

/** The version of the binary at `path`, from `--version`: "Chromium 156.0.8078.129". */
function binaryVersion(path: string): string {
  const out = execFileSync(launchableBinary(path), ['--version'], { encoding: 'utf8' });
  const match = /(\d+\.\d+\.\d+\.\d+)/.exec(out);
  assert.ok(match, `a version in ${out}`);
  return match[1] ?? '';
}

for (const { engine, path } of ENGINES) {
  describe(`the ${engine} engine`, () => {
    let site: FixtureSite;
    let other: FixtureSite;
    let t: TestRenderer;
    let version = '';
    const seen: Seen[] = [];
    const reports: Report[] = [];
    const record = (req: IncomingMessage): void => {
      seen.push({
        path: (req.url ?? '').split('?')[0] ?? '',
        languages: req.headers['accept-language'],
        ua: req.headers['user-agent'],
        brands: req.headers['sec-ch-ua'] as string | undefined,
        platform: req.headers['sec-ch-ua-platform'] as string | undefined,
        mobile: req.headers['sec-ch-ua-mobile'] as string | undefined,
      });
    };
    const html =
      (body: string, head = '') =>
      (req: IncomingMessage, res: ServerResponse): void => {
        record(req);
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(body, head));
      };
    const locked = (req: IncomingMessage, res: ServerResponse): void => {
      record(req);
      res
        .writeHead(401, { 'www-authenticate': 'Basic realm="locked"', 'content-type': 'text/html' })
        .end(page('<p style="font-size:40px">the door is locked</p>'));
    };

    before(async () => {
      assert.ok(findChromium(path), `${path} is installed (.ci/run installs both engines)`);
      version = binaryVersion(path);
      site = await startSite({
        // The other site's origin comes in the fragment; the report goes back by POST.
        '/': html(
          '<iframe id="f" width="300" height="100"></iframe><img src="/pixel.svg">',
          `<script>${REPORT}
            const OTHER = location.hash.slice(1);
            addEventListener('load', async () => {
              const frame = new Promise((resolve) => {
                addEventListener('message', (e) => resolve(e.data));
                document.getElementById('f').src = OTHER + '/frame';
              });
              const worker = new Promise((resolve) => {
                new Worker('/worker.js').onmessage = (e) => resolve(e.data);
              });
              const all = { page: await report(), frame: await frame, worker: await worker };
              await fetch('/report', { method: 'POST', body: JSON.stringify(all) });
              document.body.insertAdjacentHTML('beforeend', '<p id="reported">done</p>');
            });
          </script>`,
        ),
        '/report': (req, res) => {
          const chunks: Buffer[] = [];
          req.on('data', (c: Buffer) => chunks.push(c));
          req.on('end', () => {
            reports.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Report);
            res.writeHead(204).end();
          });
        },
        '/pixel.svg': (req, res) => {
          record(req);
          res
            .writeHead(200, { 'content-type': 'image/svg+xml' })
            .end('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>');
        },
        '/worker.js': (req, res) => {
          record(req);
          res
            .writeHead(200, { 'content-type': 'text/javascript' })
            .end(`${REPORT}; fetch('/from-worker').then(async () => postMessage(await report()));`);
        },
        '/from-worker': (req, res) => {
          record(req);
          res.writeHead(204).end();
        },
        '/challenged': html(
          `<img src="/locked"><script>
            const OTHER = location.hash.slice(1);
            document.write('<img src="' + OTHER + '/locked"><iframe src="' + OTHER + '/locked-frame"></iframe>');
          </script><p>open</p>`,
        ),
        '/locked': locked,
        '/doc.pdf': (_req, res) => {
          res.writeHead(200, { 'content-type': 'application/pdf' }).end(MINIMAL_PDF);
        },
      });
      other = await startSite(
        {
          '/frame': html(
            '<p>frame</p>',
            `<script>${REPORT}; report().then((r) => parent.postMessage(r, '*'));</script>`,
          ),
          '/locked': locked,
          '/locked-frame': html('<img src="/locked"><p>framed</p>'),
        },
        '127.0.0.2',
      );
      t = await startRenderer({ chromePath: path, concurrency: 1 });
    });
    after(async () => {
      await t?.close();
      await site?.close();
      await other?.close();
    });

    it('every request, the page, its cross-site frame and its worker say Chrome with the real version', async () => {
      const major = version.split('.')[0];
      const chromeUa = new RegExp(`\\bChrome/${major}\\.0\\.0\\.0 Safari/537\\.36$`);
      seen.length = 0;
      reports.length = 0;
      await renderWithOther(t, `${site.origin}/`, other.origin, { waitForSelector: '#reported' });
      const report = reports[0];
      assert.ok(report, 'the page reported');
      for (const where of ['page', 'frame', 'worker'] as const) {
        const r: Report['page'] | undefined = report[where];
        assert.ok(r, `${where} reported`);
        assert.match(r.ua, chromeUa, `${where} navigator.userAgent`);
        assert.doesNotMatch(r.ua, /Headless/i, where);
        assert.deepEqual(
          r.brands,
          chromiumBrands(Number(major), null).map((b) => `${b.brand}/${b.version}`),
          `${where} navigator.userAgentData.brands`,
        );
        assert.ok(r.full.includes(`Chromium/${version}`), `${where} fullVersionList ${r.full}`);
        assert.equal(r.platform, 'Linux', where);
        assert.deepEqual(r.languages, ['en-US', 'en'], `${where} navigator.languages`);
      }
      const paths = new Set(seen.map((s) => s.path));
      for (const p of ['/', '/pixel.svg', '/worker.js', '/from-worker', '/frame']) {
        assert.ok(paths.has(p), `${p} was requested: ${[...paths]}`);
      }
      for (const s of seen) {
        assert.match(s.ua ?? '', chromeUa, `User-Agent of ${s.path}`);
        // A worker's requests carry no client hints, on either engine, overridden or not; on
        // the shell their Accept-Language is its --accept-lang as written (docs/engine.md).
        if (s.path === '/worker.js' || s.path === '/from-worker') {
          assert.equal(s.brands, undefined, s.path);
          assert.match(s.languages ?? '', /^en-US,en(;q=0\.9)?$/, `Accept-Language of ${s.path}`);
          continue;
        }
        // The shell alone would send no Accept-Language at all.
        assert.equal(s.languages, 'en-US,en;q=0.9', `Accept-Language of ${s.path}`);
        assert.equal(
          s.brands,
          chromiumBrands(Number(major), null)
            .map((b) => `"${b.brand}";v="${b.version}"`)
            .join(', '),
          `Sec-CH-UA of ${s.path}`,
        );
        assert.equal(s.platform, '"Linux"', s.path);
        assert.equal(s.mobile, '?0', s.path);
      }
    });

    it("a preset's user agent wins: Safari sends no client hints, Android Chrome its own", async () => {
      for (const name of ['iphone-15', 'pixel-5'] as const) {
        const preset = DEVICES.find((d) => d.name === name);
        assert.ok(preset?.userAgent);
        seen.length = 0;
        await renderWithOther(t, `${site.origin}/`, other.origin, {
          userAgent: preset.userAgent,
          waitForSelector: '#reported',
        });
        const doc = seen.find((s) => s.path === '/');
        assert.equal(doc?.ua, preset.userAgent, name);
        if (name === 'iphone-15') assert.equal(doc?.brands, undefined, 'Safari sends no Sec-CH-UA');
        else {
          assert.match(doc?.brands ?? '', /"Chromium";v="99"/);
          assert.equal(doc?.platform, '"Android"');
          assert.equal(doc?.mobile, '?1');
        }
      }
    });

    it('a challenge on a subresource, in a cross-site frame and on the document never holds the capture', async () => {
      const started = Date.now();
      const page = await renderWithOther(t, `${site.origin}/challenged`, other.origin, {}, 20_000);
      assert.equal(page.targetStatus, 200);
      const door = await t.render({ url: `${site.origin}/locked` }, 20_000);
      // A 401 document shows its own body, as a browser whose login prompt was cancelled.
      assert.equal(door.targetStatus, 401);
      assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    });

    it(
      engine === 'shell'
        ? 'a PDF target is refused with a message that names the missing PDF viewer'
        : 'a PDF target is shown in the PDF viewer',
      async () => {
        const started = Date.now();
        const attempt = t.render({ url: `${site.origin}/doc.pdf` }, 20_000);
        if (engine === 'shell') {
          await assert.rejects(attempt, (err: AppError) => {
            assert.equal(err.code, 'target_unreachable');
            assert.match(err.message, /answered with a PDF file, not a page: the headless shell/);
            return true;
          });
        } else {
          assert.equal((await attempt).targetStatus, 200);
        }
        assert.ok(Date.now() - started < 20_000);
      },
    );
  });
}

/** Renders `url` with the other site's origin in the page's reach (`#<origin>`). */
function renderWithOther(
  t: TestRenderer,
  url: string,
  otherOrigin: string,
  options: Partial<RenderOptions> = {},
  timeoutMs = 20_000,
) {
  return t.render({ url: `${url}#${otherOrigin}`, ...options }, timeoutMs);
}

/** A plain puppeteer browser on `path` with the service's own flags (chromium-flags.ts). */
async function launchWithServiceFlags(path: string): Promise<Browser> {
  const found = findChromium(path);
  assert.ok(found, `${path} is installed`);
  return launch({
    executablePath: launchableBinary(found),
    headless: 'shell',
    pipe: true,
    args: chromiumArgs({ root: process.getuid?.() === 0 }),
  });
}

describe('site isolation on both engines', () => {
  for (const { engine, path } of ENGINES) {
    it(`${engine}: a cross-site frame runs in a process of its own (an iframe target)`, async () => {
      const framed = await startSite({ '/f': page('<p>framed</p>') }, '127.0.0.2');
      const site = await startSite({
        '/': page(`<iframe src="${framed.origin}/f"></iframe>`),
      });
      const browser = await launchWithServiceFlags(path);
      try {
        const tab = await browser.newPage();
        await tab.goto(`${site.origin}/`);
        const session = await browser.target().createCDPSession();
        const { targetInfos } = await session.send('Target.getTargets');
        const frames = targetInfos.filter((t) => t.type === 'iframe').map((t) => t.url);
        assert.deepEqual(frames, [`${framed.origin}/f`]);
      } finally {
        await browser.close();
        await site.close();
        await framed.close();
      }
    });
  }
});

describe("the GREASE brand is the engine's own", () => {
  it('the full browser, nothing overridden, lists the brands chromiumBrands makes', async () => {
    const site = await startSite({ '/': page('<p>brands</p>') });
    const browser = await launchWithServiceFlags('/usr/bin/chromium');
    try {
      const tab = await browser.newPage();
      await tab.goto(`${site.origin}/`);
      const own = await tab.evaluate(async () => {
        const d = (
          navigator as unknown as {
            userAgentData: {
              brands: unknown[];
              getHighEntropyValues(h: string[]): Promise<{ fullVersionList: unknown[] }>;
            };
          }
        ).userAgentData;
        return {
          brands: d.brands,
          full: (await d.getHighEntropyValues(['fullVersionList'])).fullVersionList,
        };
      });
      const version = (await browser.version()).split('/')[1] ?? '';
      const major = Number(version.split('.')[0]);
      assert.deepEqual(own.brands, chromiumBrands(major, null));
      assert.deepEqual(own.full, chromiumBrands(major, version));
    } finally {
      await browser.close();
      await site.close();
    }
  });
});
