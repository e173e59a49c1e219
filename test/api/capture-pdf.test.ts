/**
 * `format: "pdf"` through the HTTP surface: a Pro capture stored and served like an image as
 * application/pdf under a .pdf URL, a cache hit serving it again; Free refused; the pdf_*
 * options refused without the format, image-only fields refused with it; no quota spent on a
 * refusal. A PDF is read from Chromium as a stream with a cap: a larger one is a 400 naming it.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { encode as encodeJpeg } from 'jpeg-js';
import { BOUNDS } from '../../src/domain/bounds.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page } from '../helpers/fixtures.ts';

describe('capture API: pdf', () => {
  let t: TestApp;
  let site: FixtureSite;
  let pro: string;
  let free: string;
  before(async () => {
    // A JPEG of noise at full quality (about 13 MB; Chromium embeds a JPEG in a PDF as it
    // is), five times on its own pages: a PDF of about 66 MB, past the 50 MiB cap.
    const noise = encodeJpeg(
      { data: randomBytes(1800 * 1800 * 4), width: 1800, height: 1800 },
      100,
    ).data;
    const images = Array.from(
      { length: 5 },
      (_, i) => `<img src="/noise.jpg?${i}" style="display:block;width:100%;break-after:page">`,
    );
    ({ t, site } = await startCaptureSite({
      '/doc': page('<h1>A document</h1>'),
      '/heavy': page(images.join('')),
      '/noise.jpg': (_req, res) => {
        res.writeHead(200, { 'content-type': 'image/jpeg' }).end(noise);
      },
    }));
    pro = await newApiKey(t, { plan: 'pro' });
    free = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('stores and serves a Pro capture as application/pdf, and a hit serves it again', async () => {
    const body = { url: `${site.origin}/doc`, format: 'pdf', pdf_paper: 'letter' };
    const res = await postCapture(t, pro, { ...body, width: undefined, height: undefined });
    assert.equal(res.status, 201, await res.clone().text());
    const out = (await res.json()) as {
      image_url: string;
      format: string;
      width: number;
      height: number;
    };
    assert.equal(out.format, 'pdf');
    assert.match(out.image_url, /\/images\/[A-Za-z0-9_-]{22}\.pdf$/);
    assert.deepEqual([out.width, out.height], [612, 792]);
    const served = await fetch(out.image_url);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'application/pdf');
    assert.equal(
      Buffer.from(await served.arrayBuffer())
        .subarray(0, 5)
        .toString(),
      '%PDF-',
    );
    const hit = await postCapture(t, pro, { ...body, width: undefined, height: undefined });
    const again = (await hit.json()) as { cached: boolean; image_url: string };
    assert.deepEqual([again.cached, again.image_url], [true, out.image_url]);
  });

  it('refuses pdf on Free, and pdf options out of place, spending no quota', async () => {
    const url = `${site.origin}/doc`;
    for (const [key, body, status, message] of [
      [free, { format: 'pdf' }, 400, /^format pdf is not available on the free plan$/],
      [pro, { pdf_paper: 'a3' }, 400, /^pdf_paper applies to format pdf only$/],
      [pro, { format: 'pdf', pdf_paper: 'a5' }, 400, /^pdf_paper must be one of a4, letter/],
      [pro, { format: 'pdf', full_page: true }, 400, /^full_page does not apply to format pdf$/],
      [pro, { format: 'pdf', pdf_landscape: 'yes' }, 400, /^pdf_landscape must be a boolean/],
    ] as const) {
      const res = await postCapture(t, key, { url, ...body });
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match(((await res.json()) as { error: string }).error, message);
    }
    const usage = await fetch(`${t.url}/v1/usage`, { headers: { 'x-api-key': free } });
    assert.equal(((await usage.json()) as { used: number }).used, 0);
  });

  it('refuses a PDF over the cap with a 400 naming it, spending no quota', async () => {
    const usage = async () =>
      (
        (await (await fetch(`${t.url}/v1/usage`, { headers: { 'x-api-key': pro } })).json()) as {
          used: number;
        }
      ).used;
    const before = await usage();
    const res = await postCapture(t, pro, {
      url: `${site.origin}/heavy`,
      format: 'pdf',
      width: undefined,
      height: undefined,
    });
    const body = (await res.json()) as { code: string; error: string };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.code, 'invalid_request');
    assert.match(body.error, new RegExp(`${BOUNDS.browser.maxPdfBytes / 2 ** 20} MiB cap`));
    assert.equal(await usage(), before);
  });
});
