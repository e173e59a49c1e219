/**
 * A viewport larger than MAX_IMAGE_PIXELS is cut to fit (`truncated: true`): the cut keeps the
 * top of what the viewport shows, wherever the page is scrolled, not the document's top.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PNG } from 'pngjs';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

/** Red for the first 2,000 px, then green for 4,000 px. */
const PAGE = page(
  '<div style="height:2000px;background:#f00"></div>' +
    '<div id="green" style="height:4000px;background:#0f0"></div>',
);

describe('a viewport cut to the pixel bound', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key = '';

  before(async () => {
    site = await startSite({ '/': PAGE });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, MAX_IMAGE_PIXELS: '1000000' },
      plans: { free: { rate_per_minute: 1000 } },
    });
    key = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('keeps the top of what the scrolled viewport shows', async () => {
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url: `${site.origin}/`, width: 1280, height: 1000, scroll_into_view: '#green' },
      headers: { 'x-api-key': key },
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const answer = JSON.parse(text) as CaptureAnswer;
    assert.equal(answer.truncated, true);
    assert.equal(answer.width, 1280);
    assert.equal(answer.height, Math.floor(1_000_000 / 1280));
    const png = PNG.sync.read(Buffer.from(await (await fetch(answer.image_url)).arrayBuffer()));
    for (const y of [0, png.height - 1]) {
      const i = (y * png.width + 640) * 4;
      assert.deepEqual([...png.data.subarray(i, i + 3)], [0, 255, 0], `row ${y} is green`);
    }
  });
});
