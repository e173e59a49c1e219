/**
 * A 504 explains itself (docs/errors.md, "Shapes"): the phase the capture waited in, and up to ten
 * requests still loading, by origin and path, never their query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { RenderTimeoutDetails } from '../../src/domain/captures/renderer.ts';
import { type FixtureSite, type Handler, page, startSite } from '../helpers/fixtures.ts';
import { rejectsWith, startRenderer, type TestRenderer } from './helpers.ts';

/** Never answers: the request stays in flight until the page lets go of it. */
const hang: Handler = () => new Promise<void>(() => {});

function details(err: { body: Record<string, unknown> | undefined }): RenderTimeoutDetails {
  assert.ok(err.body, 'the 504 has its details');
  return err.body as unknown as RenderTimeoutDetails;
}

describe('render timeouts name their phase and pending requests', () => {
  let site: FixtureSite;
  /** Two more origins: images spread over three hosts start at once (six sockets per host). */
  let b: FixtureSite;
  let c: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    const hanging: Record<string, Handler> = {};
    for (let i = 0; i < 15; i++) hanging[`/hang/${i}.png`] = hang;
    b = await startSite(hanging, '127.0.0.2');
    c = await startSite(hanging, '127.0.0.3');
    const images = Array.from({ length: 15 }, (_, i) => {
      const origin = ['', b.origin, c.origin][i % 3];
      return `<img src="${origin}/hang/${i}.png?token=secret${i}">`;
    }).join('');
    site = await startSite({
      ...hanging,
      '/never': hang,
      '/redirect-to-never': (_req, res) => {
        res.writeHead(302, { location: '/never' }).end();
      },
      '/image': page('<h1>one image</h1><img src="/hang/0.png?token=secret">'),
      '/images': page(`<h1>fifteen</h1>${images}`),
      '/api-after-load': page(
        '<h1>fetches after load</h1>',
        '<script>addEventListener("load", () => fetch("/hang/1.png?key=secret"))</script>',
      ),
      '/ok': page('<h1>fine</h1>'),
    });
    t = await startRenderer();
  });

  after(async () => {
    await t?.close();
    await Promise.all([site?.close(), b?.close(), c?.close()]);
  });

  it('a main document that never answers: navigation, the document pending', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/redirect-to-never?session=abc` }, 2_500),
      'render_timeout',
      /while loading the page \(phase: navigation\); 1 request still loading: /,
    );
    assert.deepEqual(details(err), {
      phase: 'navigation',
      pending_requests: [`${site.origin}/never`],
    });
  });

  it('an image that never loads: load, the image by origin and path only', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/image` }, 3_000),
      'render_timeout',
      /\(phase: load\)/,
    );
    assert.deepEqual(details(err), {
      phase: 'load',
      pending_requests: [`${site.origin}/hang/0.png`],
    });
    assert.doesNotMatch(err.message, /secret|\?/);
  });

  it('names at most ten of many pending requests, and says there are more', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/images` }, 3_000),
      'render_timeout',
      /\(phase: load\); 15 requests still loading: .*, \.\.\.$/,
    );
    const { phase, pending_requests: pending } = details(err);
    assert.equal(phase, 'load');
    assert.equal(pending.length, 10);
    for (const name of pending) {
      assert.match(name, /^http:\/\/127\.0\.0\.[123]:\d+\/hang\/\d+\.png$/);
    }
  });

  it('a request the page starts after load, with networkidle0: network', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/api-after-load`, waitUntil: 'networkidle0' }, 3_000),
      'render_timeout',
    );
    assert.deepEqual(details(err), {
      phase: 'network',
      pending_requests: [`${site.origin}/hang/1.png`],
    });
  });

  it('the same request in the settle wait after load: network, by its step', async () => {
    // The settle wait's cap is 2 s; a shorter deadline ends inside it.
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/api-after-load` }, 1_500),
      'render_timeout',
      /while waiting for the network to settle \(phase: network\)/,
    );
    assert.equal(details(err).phase, 'network');
  });

  it('wait_for_selector that never matches: selector, nothing pending', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/ok`, waitForSelector: '#never' }, 2_000),
      'render_timeout',
      /while waiting for selector "#never" \(phase: selector\)$/,
    );
    assert.deepEqual(details(err), { phase: 'selector', pending_requests: [] });
  });

  it('a long delay: delay', async () => {
    const err = await rejectsWith(
      t.render({ url: `${site.origin}/ok`, delay: 10_000 }, 2_000),
      'render_timeout',
    );
    assert.equal(details(err).phase, 'delay');
  });

  it('renders the next page as usual', async () => {
    const result = await t.render({ url: `${site.origin}/ok` });
    assert.equal(result.targetStatus, 200);
  });
});
