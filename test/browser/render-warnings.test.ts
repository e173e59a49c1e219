/**
 * The renderer's warnings (docs/api.md, "Warnings"), each from a page that earns it, and none
 * from a page with nothing suspect.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WarningCode } from '../../src/domain/captures/warnings.ts';
import { type FixtureSite, type Handler, page, startSite } from '../helpers/fixtures.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** Never answers: the request stays in flight until the page lets go of it. */
const hang: Handler = () => new Promise<void>(() => {});

const CONTENT = page(
  '<h1 style="font:32px sans-serif;margin:20px">A page with content</h1>' +
    '<p style="font:16px sans-serif;margin:20px">Some text, and a block of colour below.</p>' +
    '<div style="margin:20px;width:200px;height:80px;background:#2a6"></div>',
);

const codes = (warnings: { code: WarningCode }[]) => warnings.map((w) => w.code).sort();

describe('render warnings', () => {
  let site: FixtureSite;
  let t: TestRenderer;

  before(async () => {
    site = await startSite({
      '/hang': hang,
      '/content': CONTENT,
      '/blank': page(''),
      '/dark-blank': page('', '<style>html{background:#123456}</style>'),
      '/nearly-blank': page('<span style="font:9px sans-serif;color:#eee">.</span>'),
      '/fetch-after-load': page(
        '<h1>content</h1><p>and a request that never ends</p>',
        '<script>addEventListener("load", () => fetch("/hang?k=secret"))</script>',
      ),
      '/missing-font': page(
        '<h1 style="font-family:Gone,serif">text in a font that fails</h1>',
        '<style>@font-face{font-family:Gone;src:url(/missing.woff2) format("woff2")}</style>',
      ),
      '/tall': page('<div style="height:20000px;background:linear-gradient(#fff,#00f)"></div>'),
      '/consent': page(
        '<h1>Article</h1><p>Text of the page.</p>' +
          '<div id="x9" style="position:fixed;left:0;right:0;bottom:0;height:40%;box-sizing:border-box;' +
          'background:#333;color:#fff;font:20px sans-serif;padding:20px">' +
          'We use cookies to measure our audience. Your privacy matters to us.</div>',
      ),
      // A thin strip along the bottom edge, below every inner sample row.
      '/consent-strip': page(
        '<h1>Article</h1><p>Text of the page.</p>' +
          '<div style="position:fixed;left:0;right:0;bottom:0;height:6%;background:#333;' +
          'color:#fff;font:14px sans-serif">This site uses cookies. Accept all?</div>',
      ),
    });
    t = await startRenderer();
  });

  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('a page with content and nothing pending has none', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const result = await t.render({ url: `${site.origin}/content`, format });
      assert.deepEqual(result.warnings, [], format);
    }
  });

  it('blank_image for one colour in every format, naming it', async () => {
    for (const format of ['png', 'jpeg', 'webp'] as const) {
      const result = await t.render({ url: `${site.origin}/blank`, format });
      assert.deepEqual(codes(result.warnings), ['blank_image'], format);
      assert.match(result.warnings[0]?.message ?? '', /one colour \(#ffffff\)/);
    }
    const dark = await t.render({ url: `${site.origin}/dark-blank` });
    assert.match(dark.warnings[0]?.message ?? '', /#123456/);
  });

  it('blank_image for nearly one colour, and for a blank full page', async () => {
    const nearly = await t.render({ url: `${site.origin}/nearly-blank` });
    assert.deepEqual(codes(nearly.warnings), ['blank_image']);
    const full = await t.render({ url: `${site.origin}/blank`, fullPage: true, format: 'jpeg' });
    assert.deepEqual(codes(full.warnings), ['blank_image']);
  });

  it('requests_pending names the request by origin and path', async () => {
    const result = await t.render({ url: `${site.origin}/fetch-after-load` });
    assert.deepEqual(codes(result.warnings), ['requests_pending']);
    assert.equal(
      result.warnings[0]?.message,
      `1 request still loading at capture: ${site.origin}/hang`,
    );
  });

  it('fonts_not_loaded for a web font that failed', async () => {
    const result = await t.render({ url: `${site.origin}/missing-font` });
    assert.deepEqual(codes(result.warnings), ['fonts_not_loaded']);
    assert.match(result.warnings[0]?.message ?? '', /1 web font failed to load/);
  });

  it('truncated beside truncated: true', async () => {
    const result = await t.render({ url: `${site.origin}/tall`, fullPage: true, format: 'jpeg' });
    assert.equal(result.truncated, true);
    assert.deepEqual(codes(result.warnings), ['truncated']);
  });

  it('banner_remaining only when banners were to be blocked', async () => {
    const blocked = await t.render({ url: `${site.origin}/consent`, blockCookieBanners: true });
    assert.deepEqual(codes(blocked.warnings), ['banner_remaining']);
    assert.match(blocked.warnings[0]?.message ?? '', /covers about 40% of the viewport/);
    const plain = await t.render({ url: `${site.origin}/consent` });
    assert.deepEqual(plain.warnings, []);
    const strip = await t.render({
      url: `${site.origin}/consent-strip`,
      blockCookieBanners: true,
    });
    assert.deepEqual(codes(strip.warnings), ['banner_remaining']);
  });
});
