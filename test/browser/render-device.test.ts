/**
 * Device emulation as the page sees it (viewport, scale, mobile, touch, orientation, user
 * agent) and in the image's pixel size; nothing of it stays for the next capture of the same
 * client or another.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { resolveCaptureOptions } from '../../src/domain/captures/capture-options.ts';
import type { RenderOptions } from '../../src/domain/captures/renderer.ts';
import { DEFAULT_PLANS } from '../../src/domain/plans.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { decodeImage, renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

interface Seen {
  width: number;
  dpr: number;
  touch: number;
  coarse: boolean;
  orientation: string;
  agent: string;
  header: string;
}

const REPORTING_PAGE = page(
  '<p>device</p>',
  `<meta name="viewport" content="width=device-width, initial-scale=1">
   <script>
     const seen = {
       width: innerWidth,
       dpr: devicePixelRatio,
       touch: navigator.maxTouchPoints,
       coarse: matchMedia('(pointer: coarse)').matches,
       orientation: screen.orientation.type,
       agent: navigator.userAgent,
     };
     const id = new URLSearchParams(location.search).get('id');
     document.write('<img style="display:none" src="/report?id=' + id + '&seen=' + encodeURIComponent(JSON.stringify(seen)) + '">');
   </script>`,
);

describe('device emulation', () => {
  let site: FixtureSite;
  let t: TestRenderer;
  const seen = new Map<string, Seen>();
  let n = 0;

  before(async () => {
    const headers = new Map<string, string>();
    site = await startSite({
      '/page': (req, res) => {
        const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
        headers.set(id, req.headers['user-agent'] ?? '');
        res.writeHead(200, { 'content-type': 'text/html' }).end(REPORTING_PAGE);
      },
      '/report': (req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        const id = url.searchParams.get('id') ?? '';
        seen.set(id, {
          ...JSON.parse(url.searchParams.get('seen') ?? '{}'),
          header: headers.get(id),
        });
        res.writeHead(204).end();
      },
    });
    t = await startRenderer({ concurrency: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  /** The request's device fields as the Pro plan resolves them. */
  const resolved = (input: Record<string, unknown>): Partial<RenderOptions> => {
    const url = new URL(`${site.origin}/page`);
    const { render } = resolveCaptureOptions({ url: url.href, ...input }, url, DEFAULT_PLANS.pro);
    const { width, height, deviceScaleFactor, userAgent, mobile, hasTouch } = render;
    return { width, height, deviceScaleFactor, userAgent, mobile, hasTouch };
  };

  const capture = async (client: string, options: Partial<RenderOptions>) => {
    const id = String(++n);
    const result = await t.renderer.render(
      renderOptions({ url: `${site.origin}/page?id=${id}`, ...options }),
      { deadline: Date.now() + 30_000, client: { id: client, maxConcurrent: 1 } },
    );
    const s = seen.get(id);
    assert.ok(s, `capture ${id} reported`);
    return { seen: s, image: decodeImage(result.image) };
  };

  it('a phone preset: its viewport, scale, touch, agent; the image in device pixels', async () => {
    const { seen: s, image } = await capture('a', resolved({ device: 'iphone-15' }));
    assert.deepEqual(
      [s.width, s.dpr, s.touch, s.coarse, s.orientation],
      [393, 3, 5, true, 'portrait-primary'],
    );
    assert.match(s.agent, /iPhone OS/);
    assert.equal(s.header, s.agent);
    assert.deepEqual([image.width, image.height], [393 * 3, 659 * 3]);
  });

  it('landscape turns it on its side', async () => {
    const { seen: s, image } = await capture('a', resolved({ device: 'pixel-5', landscape: true }));
    assert.deepEqual([s.width, s.orientation], [851, 'landscape-primary']);
    assert.deepEqual([image.width, image.height], [851 * 3, 393 * 3]);
  });

  it('leaves nothing for the next capture, of the same client or another', async () => {
    for (const client of ['a', 'b']) {
      const { seen: s, image } = await capture(client, { width: 400, height: 300 });
      assert.deepEqual([s.width, s.dpr, s.touch, s.coarse], [400, 1, 0, false], client);
      assert.doesNotMatch(s.agent, /iPhone|Android/, client);
      assert.deepEqual([image.width, image.height], [400, 300]);
    }
  });
});
