/**
 * Tall pages through the real HTTP surface (docs/api.md, "Tall pages"): a full page taller
 * than Chromium draws in one piece comes back whole, drawn in slices and joined, up to
 * MAX_PAGE_HEIGHT (65,535 device px by default; 16,383 for webp, 65,500 for jpeg) and
 * MAX_IMAGE_PIXELS, with `truncated: true` when cut. Coloured bands every 5,000 px, each read
 * back at its depth in the hosted image, catch a slice drawn in the wrong place or a repeated
 * tile; a fixed header and a sticky bar show once, at the top. Heavy: the captures run one at
 * a time, on a generous deadline.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import {
  assertNear,
  type FixtureSite,
  imageSize,
  page,
  type Rgb,
  startSite,
} from '../helpers/fixtures.ts';

const HEAVY = { timeout: 600_000 };
const MAX_PIXELS = 64_000_000;

const BAND_COLOURS: Rgb[] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 0],
  [0, 255, 255],
  [255, 0, 255],
  [128, 0, 0],
  [0, 128, 0],
  [0, 0, 128],
  [128, 128, 0],
  [0, 128, 128],
  [128, 0, 128],
  [64, 64, 64],
  [192, 192, 192],
];
const BAND = 5_000;
const WHITE: Rgb = [255, 255, 255];
const BLACK: Rgb = [0, 0, 0];
const ORANGE: Rgb = [255, 128, 0];
const css = ([r, g, b]: Rgb) => `rgb(${r},${g},${b})`;

/**
 * A page `height` px tall of bands 5,000 px each, in BAND_COLOURS order, the last 100 px a
 * white bottom marker. `header`: a fixed black header 80 px tall over it, and an orange
 * sticky bar (`top: 80px`) in the first band, 200 px down, 30 px tall.
 */
function bandsPage(height: number, header = false): string {
  let bands = '';
  for (let top = 0, i = 0; top < height - 100; top += BAND, i++) {
    const colour = css(BAND_COLOURS[i] as Rgb);
    let h = Math.min(BAND, height - 100 - top);
    if (header && i === 0) {
      bands +=
        `<div style="height:200px;background:${colour}"></div>` +
        `<nav style="position:sticky;top:80px;height:30px;background:${css(ORANGE)}"></nav>`;
      h -= 230;
    }
    bands += `<div style="height:${h}px;background:${colour}"></div>`;
  }
  bands += `<div style="height:100px;background:${css(WHITE)}"></div>`;
  const fixed = header
    ? `<header style="position:fixed;top:0;left:0;right:0;height:80px;background:${css(BLACK)};z-index:2"></header>`
    : '';
  return page(fixed + bands, '<style>html,body{margin:0}</style>');
}

/** One column of the image's pixels, top to bottom, decoded without the rest of the image. */
async function column(bytes: Buffer, x: number): Promise<(y: number) => Rgb> {
  const { data, info } = await sharp(bytes, { limitInputPixels: false })
    .extract({ left: x, top: 0, width: 1, height: imageSize(bytes).height })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return (y: number) => {
    const i = Math.floor(y) * info.channels;
    return [data[i] ?? -1, data[i + 1] ?? -1, data[i + 2] ?? -1];
  };
}

/**
 * Every band in place: 20 output px inside its top and its bottom and at its middle, at
 * `scale` output px per page px, down to `height` output px (where the image may be cut).
 */
function assertBands(at: (y: number) => Rgb, pageHeight: number, scale: number, height: number) {
  const inside = 20 / scale;
  for (let top = 0, i = 0; top < pageHeight - 100; top += BAND, i++) {
    const colour = BAND_COLOURS[i] as Rgb;
    const bottom = Math.min(top + BAND, pageHeight - 100);
    for (const y of [top + inside, (top + bottom) / 2, bottom - inside]) {
      if (y * scale < height) assertNear(at(y * scale), colour, `band ${i} at page y ${y}`);
    }
  }
}

describe('tall pages', () => {
  let t: TestApp;
  let site: FixtureSite;
  let pro: string;

  before(async () => {
    site = await startSite({
      '/30k': bandsPage(30_000),
      '/header': bandsPage(20_000, true),
      '/70k': bandsPage(70_000),
    });
    t = await startApp({
      db: 'sqlite',
      env: {
        EGRESS_ALLOWLIST: site.hostPort,
        RENDER_CONCURRENCY: '1',
        // Slices of a 65,535 px capture take a while on a busy two-core machine.
        RENDER_TIMEOUT_MS: '280000',
        MAX_IMAGE_PIXELS: String(MAX_PIXELS),
        // MAX_PAGE_HEIGHT at its default (65,535). The slices are logged at debug.
        LOG_LEVEL: 'debug',
      },
      plans: { pro: { rate_per_minute: 1000 } },
    });
    pro = await newApiKey(t, { plan: 'pro' });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  /**
   * A 201 full-page capture and its hosted image, whose header matches the answer; `slices`:
   * how many slices it was drawn in (0: in one piece), from the renderer's debug line.
   */
  async function shot(path: string, json: Record<string, unknown> = {}) {
    const logged = t.logs.length;
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url: `${site.origin}${path}`, width: 1280, height: 800, full_page: true, ...json },
      headers: { 'x-api-key': pro },
    });
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const body = JSON.parse(text) as CaptureAnswer;
    const bytes = Buffer.from(await (await fetch(body.image_url)).arrayBuffer());
    const size = imageSize(bytes);
    assert.deepEqual(
      [size.format, size.width, size.height],
      [body.format, body.width, body.height],
      'answer = header',
    );
    const line = t.logs.slice(logged).find((l) => l.includes('drawn in slices and joined'));
    const slices = line === undefined ? 0 : (JSON.parse(line) as { slices: number }).slices;
    return { body, bytes, slices };
  }

  it('a 30,000 px page comes back whole, every band at its depth', HEAVY, async () => {
    // The service's resident memory over the request (this process: the app runs in it).
    const before = process.memoryUsage.rss();
    let peak = before;
    const timer = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 10);
    const { body, bytes, slices } = await shot('/30k').finally(() => clearInterval(timer));
    const raw = body.width * body.height * 4;
    assert.ok(peak - before < 3 * raw, `grew by ${peak - before} bytes, raw ${raw}`);
    assert.deepEqual([body.width, body.height, body.truncated], [1280, 30_000, false]);
    assert.equal(slices, 8, 'eight slices of 3,750 rows');
    for (const x of [10, 640, 1270]) {
      const at = await column(bytes, x);
      assertBands(at, 30_000, 1, 30_000);
      assertNear(at(29_950), WHITE, `the bottom marker at x ${x}`);
      assertNear(at(29_999), WHITE, `the last row at x ${x}`);
      assertNear(at(29_890), BAND_COLOURS[5] as Rgb, `just above the bottom marker at x ${x}`);
    }
  });

  it('as jpeg too', HEAVY, async () => {
    const { body, bytes } = await shot('/30k', { format: 'jpeg' });
    assert.deepEqual([body.format, body.width, body.height], ['jpeg', 1280, 30_000]);
    const at = await column(bytes, 640);
    assertBands(at, 30_000, 1, 30_000);
    assertNear(at(29_950), WHITE, 'the bottom marker');
  });

  it('as webp it is cut at 16,383 px, the format’s limit', HEAVY, async () => {
    const { body, bytes, slices } = await shot('/30k', { format: 'webp' });
    assert.equal(slices, 0, 'one piece');
    assert.deepEqual(
      [body.format, body.width, body.height, body.truncated],
      ['webp', 1280, 16_383, true],
    );
    assertBands(await column(bytes, 640), 30_000, 1, 16_383);
  });

  it('fixed and sticky elements stitched past 16,384 px show once, at the top', HEAVY, async () => {
    const { body, bytes, slices } = await shot('/header');
    assert.deepEqual([body.width, body.height, body.truncated], [1280, 20_000, false]);
    assert.equal(slices, 5, 'five slices of 4,000 rows: the header in none but the first');
    const at = await column(bytes, 640);
    /** Rows, every 5 px, whose colour is near `rgb`. */
    const rowsOf = (rgb: Rgb): number[] => {
      const rows: number[] = [];
      for (let y = 0; y < body.height; y += 5) {
        if (at(y).every((v, i) => Math.abs(v - (rgb[i] ?? 0)) <= 40)) rows.push(y);
      }
      return rows;
    };
    const rowsFrom = (first: number, count: number) =>
      Array.from({ length: count }, (_, i) => first + i * 5);
    assert.deepEqual(rowsOf(BLACK), rowsFrom(0, 16), 'the fixed header, once');
    assert.deepEqual(rowsOf(ORANGE), rowsFrom(200, 6), 'the sticky bar, once, in its place');
    assertNear(at(100), BAND_COLOURS[0] as Rgb, 'under the header');
    assertNear(at(4_000), BAND_COLOURS[0] as Rgb, 'the second slice starts in the first band');
    assertNear(at(19_950), WHITE, 'the bottom marker');
  });

  it('image_width on a tall page gives the asked size, the bands scaled', HEAVY, async () => {
    // 30,000 x 1000/1280 = 23,437.5: still taller than one piece, drawn at the smaller scale.
    const { body, bytes } = await shot('/30k', { image_width: 1000 });
    assert.deepEqual([body.width, body.height], [1000, 23_438]);
    const at = await column(bytes, 500);
    assertBands(at, 30_000, 1000 / 1280, 23_438);
    assertNear(at(23_420), WHITE, 'the bottom marker');
    // fill: drawn 1000 x 23,438 in slices, then squeezed to 2,000 rows in the same pass.
    const fill = await shot('/30k', { image_width: 1000, image_height: 2_000, image_fit: 'fill' });
    assert.deepEqual([fill.body.width, fill.body.height], [1000, 2_000]);
    const squeezed = await column(fill.bytes, 500);
    assertBands(squeezed, 30_000, 2_000 / 30_000, 2_000);
    assertNear(squeezed(1_998), WHITE, 'the bottom marker, squeezed');
  });

  it('heights are device pixels: at scale 2 the same page is 60,000 px', HEAVY, async () => {
    // 1000 x 60,000 device px is within the pixel budget.
    const { body, bytes, slices } = await shot('/30k', { width: 500, device_scale_factor: 2 });
    assert.deepEqual([body.width, body.height, body.truncated], [1000, 60_000, false]);
    assert.equal(slices, 15);
    const at = await column(bytes, 500);
    assertBands(at, 30_000, 2, 60_000);
    assertNear(at(59_950), WHITE, 'the bottom marker');
  });

  it('a page taller than MAX_PAGE_HEIGHT is cut there, truncated', HEAVY, async () => {
    // 800 x 65,535 is within the pixel budget: the height bound cuts.
    const { body, bytes, slices } = await shot('/70k', { width: 800 });
    assert.deepEqual([body.width, body.height, body.truncated], [800, 65_535, true]);
    assert.equal(slices, 16);
    const at = await column(bytes, 400);
    assertBands(at, 70_000, 1, 65_535);
    assertNear(at(65_534), BAND_COLOURS[13] as Rgb, 'the last row, in the last band');
    // libjpeg writes at most 65,500 rows: a jpeg is cut there.
    const jpeg = await shot('/70k', { width: 800, format: 'jpeg' });
    assert.deepEqual([jpeg.body.width, jpeg.body.height, jpeg.body.truncated], [800, 65_500, true]);
    assertBands(await column(jpeg.bytes, 400), 70_000, 1, 65_500);
  });

  it('MAX_IMAGE_PIXELS still bounds it', HEAVY, async () => {
    const { body, bytes } = await shot('/70k', { format: 'jpeg' });
    const height = Math.floor(MAX_PIXELS / 1280);
    assert.deepEqual([body.width, body.height, body.truncated], [1280, height, true]);
    assertBands(await column(bytes, 640), 70_000, 1, height);
  });
});
