/**
 * Resized images (`image_width`, `image_height`, `image_fit`) through the HTTP surface: the
 * answer's size is the hosted image's, read from its own header, in every mode and format; the
 * pixels show which part of the page each mode keeps; bad values are 400s that name the field.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { PNG } from 'pngjs';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import {
  assertNear,
  type FixtureSite,
  imageSize,
  page,
  pngPixel,
  type Rgb,
  startSite,
} from '../helpers/fixtures.ts';

/**
 * Four vertical bands, red, green, blue, yellow from left to right, over the top 400 px; the
 * rest of the page (3,000 px) black, with a white bottom marker 100 px tall.
 */
const BANDS = page(
  '<div class="bands"><i style="background:#f00"></i><i style="background:#0f0"></i>' +
    '<i style="background:#00f"></i><i style="background:#ff0"></i></div>' +
    '<div style="height:2500px;background:#000"></div>' +
    '<div style="height:100px;background:#fff"></div>',
  '<style>html,body{margin:0;background:#000}.bands{display:flex;height:400px}' +
    '.bands i{flex:1}</style>',
);

const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];
const YELLOW: Rgb = [255, 255, 0];
const BLACK: Rgb = [0, 0, 0];
const WHITE: Rgb = [255, 255, 255];

describeEachDatabase('resized images', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  let pro: string;
  let free: string;

  before(async () => {
    site = await startSite({ '/bands': BANDS });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '2' },
      plans: { free: { rate_per_minute: 1000 }, pro: { rate_per_minute: 1000 } },
    });
    pro = await newApiKey(t, { plan: 'pro' });
    free = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, json: Record<string, unknown>) =>
    t.fetch('/v1/screenshots', { method: 'POST', json, headers: { 'x-api-key': key } });

  /** A 201 capture of the bands page; its answer and its hosted image, read back. */
  async function shot(json: Record<string, unknown>, key = pro) {
    const res = await capture(key, {
      url: `${site.origin}/bands`,
      width: 800,
      height: 400,
      ...json,
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const body = JSON.parse(text) as CaptureAnswer;
    const bytes = Buffer.from(await (await fetch(body.image_url)).arrayBuffer());
    const size = imageSize(bytes);
    assert.deepEqual([size.width, size.height], [body.width, body.height], 'answer = header');
    return { body, bytes, png: body.format === 'png' ? PNG.sync.read(bytes) : null };
  }

  it('image_width alone: the height follows, the whole viewport in it', async () => {
    const { body, png } = await shot({ image_width: 200 });
    assert.deepEqual([body.width, body.height], [200, 100]);
    assertNear(pngPixel(png as PNG, 10, 50), RED, 'left band');
    assertNear(pngPixel(png as PNG, 190, 50), YELLOW, 'right band');
  });

  it('image_height alone: the width follows', async () => {
    const { body } = await shot({ image_height: 50 });
    assert.deepEqual([body.width, body.height], [100, 50]);
  });

  it('both, cover (the default): exactly the box, cut from the top centre', async () => {
    const { body, png } = await shot({ image_width: 100, image_height: 100 });
    assert.deepEqual([body.width, body.height], [100, 100]);
    // 800x400 scaled to cover 100x100 is 200x100: its middle 100 px are green and blue.
    assertNear(pngPixel(png as PNG, 10, 50), GREEN, 'left edge of the crop');
    assertNear(pngPixel(png as PNG, 90, 50), BLUE, 'right edge of the crop');
  });

  it('both, contain: fits inside, no padding', async () => {
    const { body, png } = await shot({ image_width: 100, image_height: 100, image_fit: 'contain' });
    assert.deepEqual([body.width, body.height], [100, 50]);
    assertNear(pngPixel(png as PNG, 5, 25), RED, 'left band');
    assertNear(pngPixel(png as PNG, 95, 25), YELLOW, 'right band');
  });

  it('both, fill: stretched to the box, every band kept', async () => {
    const { body, png } = await shot({ image_width: 100, image_height: 100, image_fit: 'fill' });
    assert.deepEqual([body.width, body.height], [100, 100]);
    assertNear(pngPixel(png as PNG, 5, 90), RED, 'left band');
    assertNear(pngPixel(png as PNG, 37, 90), GREEN, 'second band');
    assertNear(pngPixel(png as PNG, 62, 90), BLUE, 'third band');
    assertNear(pngPixel(png as PNG, 95, 90), YELLOW, 'right band');
  });

  it('a full page scaled down keeps its bottom, in jpeg and webp too', async () => {
    const { body, png } = await shot({ full_page: true, image_width: 200 });
    // 800 x 3000 at a quarter.
    assert.deepEqual([body.width, body.height], [200, 750]);
    assertNear(pngPixel(png as PNG, 100, 745), WHITE, 'the bottom marker');
    assertNear(pngPixel(png as PNG, 100, 600), BLACK, 'above the marker');
    for (const format of ['jpeg', 'webp']) {
      const other = await shot({ full_page: true, image_width: 200, format });
      assert.deepEqual(
        [other.body.format, other.body.width, other.body.height],
        [format, 200, 750],
      );
    }
  });

  it('a phone showing a page laid out wider than its screen keeps the whole width', async () => {
    // No meta viewport: laid out 980 px wide and zoomed out to the phone's 393 x 659 (iphone-15,
    // scale 3); the thumbnail is of what the phone shows, every band in it.
    const { body, png } = await shot({
      device: 'iphone-15',
      width: undefined,
      height: undefined,
      image_width: 200,
    });
    assert.deepEqual([body.width, body.height], [200, 335]);
    assertNear(pngPixel(png as PNG, 5, 20), RED, 'left band');
    assertNear(pngPixel(png as PNG, 195, 20), YELLOW, 'right band');
  });

  it('sizes that do not divide evenly come out exact', async () => {
    for (const [w, h, fit] of [
      [333, 77, 'cover'],
      [17, 401, 'fill'],
      [799, 16, 'cover'],
    ] as const) {
      const { body } = await shot({ image_width: w, image_height: h, image_fit: fit });
      assert.deepEqual([body.width, body.height], [w, h], `${w}x${h} ${fit}`);
    }
    const { body } = await shot({ image_width: 333 });
    assert.deepEqual([body.width, body.height], [333, 167]);
  });

  it('the size is part of the cached result', async () => {
    const a = await shot({ image_width: 120 });
    const b = await shot({ image_width: 160 });
    assert.equal(b.body.cached, false);
    assert.deepEqual([a.body.width, b.body.width], [120, 160]);
    const again = await shot({ image_width: 120 });
    assert.equal(again.body.cached, true);
    assert.equal(again.body.width, 120);
  });

  it('refuses what it cannot deliver, naming the field', async () => {
    const url = `${site.origin}/bands`;
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      [free, { image_width: 1921 }, /image_width may be at most 1920 on the free plan/],
      [pro, { image_height: 2161 }, /image_height may be at most 2160/],
      [pro, { image_width: 15 }, /image_width/],
      [pro, { image_width: 100.5 }, /image_width/],
      [pro, { image_fit: 'stretch', image_width: 100, image_height: 100 }, /image_fit/],
      [pro, { image_width: 100, format: 'pdf' }, /image_width is not allowed with format pdf/],
    ];
    for (const [key, json, message] of cases) {
      const res = await capture(key, { url, ...json });
      const body = (await res.json()) as { code: string; error: string };
      assert.equal(res.status, 400, JSON.stringify(json));
      assert.equal(body.code, 'invalid_request', JSON.stringify(body));
      assert.match(body.error, message, JSON.stringify(json));
    }
  });
});
