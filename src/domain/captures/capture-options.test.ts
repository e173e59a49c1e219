import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSecretDeriver } from '../../lib/server-secret.ts';
import { isAppError } from '../errors.ts';
import { DEFAULT_PLANS } from '../plans.ts';
import {
  CAPTURE_OPTIONS,
  type CaptureInput,
  CaptureRequest,
  credentialDigest,
  cacheKeyFor as keyWith,
  resolveCaptureOptions,
} from './capture-options.ts';
import type { KeyedOptions } from './options/define.ts';

const DIGEST = credentialDigest(createSecretDeriver('test server secret '.repeat(2)));
const cacheKeyFor = (owner: string, options: KeyedOptions) => keyWith(owner, options, DIGEST);

const url = new URL('https://example.com/a');
const resolve = (input: Omit<CaptureInput, 'url'>, plan = DEFAULT_PLANS.pro) =>
  resolveCaptureOptions({ url: url.href, ...input }, url, plan);
const refusal = (input: Omit<CaptureInput, 'url'>, plan = DEFAULT_PLANS.free) => {
  try {
    resolve(input, plan);
  } catch (err) {
    assert.ok(isAppError(err));
    return `${err.code}: ${err.message}`;
  }
  assert.fail('not refused');
};

test('a bare request resolves every render option to its default', () => {
  assert.deepEqual(resolve({}, DEFAULT_PLANS.free), {
    fresh: false,
    cacheTtlMs: 900_000,
    storage: null,
    render: {
      url: 'https://example.com/a',
      format: 'png',
      quality: 80,
      width: 1920,
      height: 1080,
      maxWidth: 1920,
      fullPage: false,
      deviceScaleFactor: 1,
      waitUntil: 'load',
      delay: 0,
      waitForSelector: null,
      selector: null,
      darkMode: false,
      reducedMotion: false,
      hideSelectors: [],
      omitBackground: false,
      userAgent: null,
      locale: null,
      timezone: null,
      mediaType: 'screen',
      styles: null,
      scripts: null,
      click: null,
      scrollIntoView: null,
      failOnHttpError: false,
      failOn: [],
      clip: null,
      blockRequests: [],
      blockResources: [],
      headers: [],
      cookies: [],
      httpAuth: null,
      blockAds: false,
      blockTrackers: false,
      blockCookieBanners: false,
      mobile: false,
      hasTouch: false,
      metadata: false,
      pdfPaper: 'a4',
      pdfLandscape: false,
      pdfPrintBackground: true,
      pdfSinglePage: false,
      imageWidth: null,
      imageHeight: null,
      imageFit: 'cover',
      html: null,
      markdown: null,
      content: [],
      proxy: null,
      geolocation: null,
    },
  });
});

test('html and markdown are kept for the browser; the key is their hash', () => {
  const doc = resolve({ html: '<p>hello</p>' } as Omit<CaptureInput, 'url'>).render;
  assert.equal(doc.html, '<p>hello</p>');
  const md = resolve({ markdown: '# Title' } as Omit<CaptureInput, 'url'>).render;
  assert.deepEqual([md.html, md.markdown], [null, '# Title']);
  const mdKey = (markdown: string) =>
    cacheKeyFor('user:1', { ...resolve({}).render, markdown } as KeyedOptions);
  assert.notEqual(mdKey('# a'), mdKey('# b'));
  const key = (html: string | null) =>
    cacheKeyFor('user:1', { ...resolve({}).render, html } as KeyedOptions);
  assert.equal(key('<p>a</p>'), key('<p>a</p>'));
  assert.notEqual(key('<p>a</p>'), key('<p>b</p>'));
  assert.notEqual(key('<p>a</p>'), key(null));
  assert.equal(
    refusal({ html: 'é'.repeat(600_000) } as Omit<CaptureInput, 'url'>),
    'invalid_request: html may be at most 1 MiB (got 1200000 bytes)',
  );
});

test('plan rules refuse what the plan does not allow, and cap the viewport', () => {
  assert.equal(
    refusal({ format: 'webp' }),
    'plan_restriction: format webp is not available on the free plan',
  );
  assert.equal(
    refusal({ fresh: true }),
    'plan_restriction: fresh is not available on the free plan',
  );
  assert.equal(
    refusal({ device_scale_factor: 2 }),
    'plan_restriction: device_scale_factor other than 1 is not available on the free plan',
  );
  assert.equal(
    refusal({ device_scale_factor: 3 }, { ...DEFAULT_PLANS.pro, max_device_scale_factor: 2 }),
    'plan_restriction: device_scale_factor must be at most 2 on the pro plan',
  );
  assert.equal(
    refusal({ full_page: true }, DEFAULT_PLANS.demo),
    'plan_restriction: full_page is not available on the demo plan',
  );
  assert.equal(
    refusal({ omit_background: true, format: 'jpeg' }),
    'invalid_request: omit_background needs format png or webp (jpeg has no transparency)',
  );
  // The first refusal in table order is the one reported.
  assert.equal(
    refusal({ omit_background: true, format: 'webp', fresh: true }),
    'plan_restriction: format webp is not available on the free plan',
  );
  const capped = resolve({ width: 9999, height: 9999 }, DEFAULT_PLANS.free).render;
  assert.deepEqual([capped.width, capped.height, capped.maxWidth], [1920, 1080, 1920]);
  assert.equal(resolve({ fresh: true }).fresh, true);
});

test('the cache key covers the owner and every option that changes the image', () => {
  const base = resolve({}).render;
  const key = cacheKeyFor('user:1:pro', base);
  assert.match(key, /^[0-9a-f]{64}$/);
  assert.equal(cacheKeyFor('user:1:pro', resolve({}).render), key);
  assert.notEqual(cacheKeyFor('user:2:pro', base), key);
  assert.equal(cacheKeyFor('user:1:pro', resolve({ fresh: true }).render), key);
  const changes: Omit<CaptureInput, 'url'>[] = [
    { format: 'jpeg' },
    { width: 800 },
    { height: 600 },
    { full_page: true },
    { quality: 50 },
    { device_scale_factor: 2 },
    { wait_until: 'networkidle0' },
    { delay: 10 },
    { wait_for_selector: '#a' },
    { selector: '#a' },
    { dark_mode: true },
    { reduced_motion: true },
    { hide_selectors: ['#a'] },
    { omit_background: true },
    { user_agent: 'Bot/1' },
    { locale: 'de' },
    { timezone: 'Asia/Tokyo' },
    { media_type: 'print' },
    { styles: 'p{}' },
    { scripts: '1' },
    { click: '#a' },
    { scroll_into_view: '#a' },
    { fail_on_http_error: true },
    { clip: { x: 0, y: 0, width: 10, height: 10 } },
    { block_requests: ['*.png'] },
    { block_resources: ['image'] },
    { headers: { 'X-A': '1' } },
    { cookies: [{ name: 'a', value: '1' }] },
    { http_auth: { username: 'u', password: 'p' } },
    { block_ads: true },
    { block_trackers: true },
    { block_cookie_banners: true },
    { device: 'iphone-15' },
    { mobile: true },
    { has_touch: true },
    { landscape: true },
    { metadata: true },
    { format: 'pdf' },
    { format: 'pdf', pdf_paper: 'letter' },
    { format: 'pdf', pdf_landscape: true },
    { format: 'pdf', pdf_print_background: false },
    { format: 'pdf', pdf_single_page: true },
  ];
  const keys = new Set([key, ...changes.map((c) => cacheKeyFor('user:1:pro', resolve(c).render))]);
  assert.equal(keys.size, changes.length + 1);
  const otherUrl = new URL('https://example.com/b');
  const other = resolveCaptureOptions({ url: otherUrl.href }, otherUrl, DEFAULT_PLANS.pro);
  assert.notEqual(cacheKeyFor('user:1:pro', other.render), key);
  // The plan's width bound is part of it (PLANS_FILE may change it under the same name).
  assert.notEqual(
    cacheKeyFor('user:1:pro', resolve({}, { ...DEFAULT_PLANS.pro, max_width: 4000 }).render),
    key,
  );
});

test('cache keys are the same as the last release computed: stored entries keep serving', () => {
  // Taken from the code before the key's parts were ordered once at load instead of on
  // every call. A change here makes every stored entry a miss after an upgrade: if that is
  // meant, say so in the release notes. (Keys of requests with headers, cookies or
  // http_auth changed once, on purpose, when credentials became an HMAC: issue 29.)
  assert.equal(
    cacheKeyFor('user:1:pro', resolve({}).render),
    'fd46b6f6c3fb4d08368524ee2376dff3f5574818d53a2ab0b5452a117d5a744d',
  );
  const many = resolve({
    format: 'jpeg',
    width: 800,
    full_page: true,
    block_ads: true,
    cache_ttl: 60,
  });
  assert.equal(
    cacheKeyFor('user:1:pro', { ...many.render, cacheTtlMs: many.cacheTtlMs }),
    '06d04d0f19e6f0e84742cb28d3ac0659efbb5701705b3218381cfb56c027e735',
  );
});

test('the request schema is the table: one field per option, nothing else', () => {
  assert.deepEqual(
    Object.keys(CaptureRequest.properties),
    CAPTURE_OPTIONS.map((o) => o.name),
  );
  // None: exactly one of url, html or markdown is the pipeline's check (capture-target.ts).
  assert.equal(CaptureRequest.required, undefined);
  assert.equal((CaptureRequest as { additionalProperties?: unknown }).additionalProperties, false);
  // @ts-expect-error: the input type comes from the schema, so an unknown format is a type error.
  const bad: CaptureInput = { url: 'https://example.com/', format: 'gif' };
  assert.ok(bad);
});

test('user_agent, locale and timezone: checked, and kept in their canonical form', () => {
  const render = resolve({
    user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Bot/1.0',
    locale: 'EN-gb',
    timezone: 'utc',
    media_type: 'print',
  }).render;
  assert.deepEqual(
    [render.userAgent, render.locale, render.timezone, render.mediaType],
    ['Mozilla/5.0 (X11; Linux x86_64) Bot/1.0', 'en-GB', 'UTC', 'print'],
  );
  // Names of three parts are zones too (ICU may answer with its own name for the zone).
  assert.match(
    String(resolve({ timezone: 'America/Argentina/Buenos_Aires' }).render.timezone),
    /Buenos_Aires$/,
  );
  for (const [input, message] of [
    [
      { user_agent: 'Bot\r\nX-Injected: 1' },
      'user_agent may hold printable ASCII characters only (no line breaks)',
    ],
    [
      { user_agent: 'Bötchen' },
      'user_agent may hold printable ASCII characters only (no line breaks)',
    ],
    [{ locale: 'en_US' }, 'locale must be a BCP 47 language tag, such as en-US or de'],
    [{ locale: 'en--US' }, 'locale must be a BCP 47 language tag, such as en-US or de'],
    [
      { timezone: 'Mars/Olympus_Mons' },
      'timezone "Mars/Olympus_Mons" is not an IANA time zone name, such as Europe/Paris or UTC',
    ],
    [
      { timezone: '+01:00' },
      'timezone "+01:00" is not an IANA time zone name, such as Europe/Paris or UTC',
    ],
  ] as const) {
    assert.equal(refusal(input, DEFAULT_PLANS.pro), `invalid_request: ${message}`);
  }
  // At their defaults they add nothing to the cache key: keys made before they existed hold.
  const before = resolve({}).render;
  assert.deepEqual(
    [before.userAgent, before.locale, before.timezone, before.mediaType],
    [null, null, null, 'screen'],
  );
  assert.equal(
    cacheKeyFor('user:1:pro', resolve({ media_type: 'screen' }).render),
    cacheKeyFor('user:1:pro', before),
  );
});

test('scroll_into_view is for viewport captures only', () => {
  const message =
    'invalid_request: scroll_into_view is for viewport captures: not with full_page or selector';
  assert.equal(refusal({ scroll_into_view: '#a', full_page: true }, DEFAULT_PLANS.pro), message);
  assert.equal(refusal({ scroll_into_view: '#a', selector: '#b' }, DEFAULT_PLANS.pro), message);
  assert.equal(resolve({ scroll_into_view: '#a' }).render.scrollIntoView, '#a');
});

test('cache_ttl: how old a cached result may be, in the key unless it is the default', () => {
  const keyOf = (input: Omit<CaptureInput, 'url'>) => {
    const { render, cacheTtlMs } = resolve(input);
    return cacheKeyFor('user:1:pro', { ...render, cacheTtlMs });
  };
  assert.equal(resolve({}).cacheTtlMs, 900_000);
  assert.equal(resolve({ cache_ttl: 0 }).cacheTtlMs, 0);
  assert.equal(resolve({ cache_ttl: 86_400 }).cacheTtlMs, 86_400_000);
  assert.equal(keyOf({ cache_ttl: 900 }), keyOf({}));
  assert.equal(keyOf({}), cacheKeyFor('user:1:pro', resolve({}).render));
  assert.notEqual(keyOf({ cache_ttl: 60 }), keyOf({}));
  assert.notEqual(keyOf({ cache_ttl: 0 }), keyOf({ cache_ttl: 60 }));
});

test('clip: not with full_page or selector', () => {
  const clip = { x: 1, y: 2, width: 3, height: 4 };
  const message = 'invalid_request: clip is not allowed with full_page or selector';
  assert.equal(refusal({ clip, full_page: true }, DEFAULT_PLANS.pro), message);
  assert.equal(refusal({ clip, selector: '#a' }, DEFAULT_PLANS.pro), message);
  assert.deepEqual(resolve({ clip }).render.clip, clip);
});

test('credentials enter the cache key only as an HMAC keyed from the server secret', () => {
  const otherDigest = credentialDigest(createSecretDeriver('another server secret '.repeat(2)));
  const credentialed: Array<Omit<CaptureInput, 'url'>> = [
    { headers: { Authorization: 'Bearer s3cr3t-token' } },
    { cookies: [{ name: 'session', value: 's3cr3t-cookie' }] },
    { http_auth: { username: 'u', password: 's3cr3t-password' } },
  ];
  for (const input of credentialed) {
    const { render, cacheTtlMs } = resolve(input);
    const options = { ...render, cacheTtlMs };
    // Without the server secret the key cannot be recomputed, so a copy of the records is no
    // oracle for guessing a password: the same request under another secret has another key.
    assert.notEqual(keyWith('u', options, DIGEST), keyWith('u', options, otherDigest));
    const parts = CAPTURE_OPTIONS.map((o) => JSON.stringify(o.cacheKey(options, DIGEST) ?? null));
    assert.ok(
      parts.every((part) => !part.includes('s3cr3t')),
      `no credential in the clear among the key's parts: ${JSON.stringify(input)}`,
    );
  }
  // Requests without credentials keep their keys whatever the secret.
  const { render, cacheTtlMs } = resolve({ width: 800 });
  assert.equal(
    keyWith('u', { ...render, cacheTtlMs }, DIGEST),
    keyWith('u', { ...render, cacheTtlMs }, otherDigest),
  );
});

test('request options: normalised, so equal requests share a cache entry', () => {
  const key = (input: Omit<CaptureInput, 'url'>) => cacheKeyFor('u', resolve(input).render);
  assert.equal(
    key({ block_resources: ['script', 'image', 'image'] }),
    key({ block_resources: ['image', 'script'] }),
  );
  assert.equal(
    key({ block_requests: ['*b*', '*a*', '*a*'] }),
    key({ block_requests: ['*a*', '*b*'] }),
  );
  assert.equal(
    key({ headers: { 'X-B': '2', 'X-A': '1' } }),
    key({ headers: { 'x-a': '1', 'X-B': '2' } }),
  );
  assert.equal(key({ block_resources: [] }), key({}));
  assert.equal(key({ headers: {} }), key({}));
});

test('cookies: scoped to the target host or a parent domain of it', () => {
  const sub = new URL('https://www.shop.example.com/');
  const cookies = (domain: string) =>
    resolveCaptureOptions(
      {
        url: sub.href,
        cookies: [{ name: 'a', value: '1', domain, secure: true, same_site: 'none' }],
      },
      sub,
      DEFAULT_PLANS.pro,
    ).render.cookies[0];
  assert.deepEqual(cookies('shop.example.com'), {
    name: 'a',
    value: '1',
    domain: 'shop.example.com',
    path: '/',
    secure: true,
    httpOnly: false,
    sameSite: 'None',
  });
  assert.equal(cookies('.EXAMPLE.com')?.domain, 'example.com');
  assert.equal(cookies('www.shop.example.com')?.domain, null, 'the host itself: host-only');
  for (const bad of ['com', 'hop.example.com', 'other.com', 'www.shop.example.com.evil']) {
    assert.throws(() => cookies(bad), /must be the target's host/, bad);
  }
  const pages = new URL('https://me.github.io/');
  assert.throws(
    () =>
      resolveCaptureOptions(
        { url: pages.href, cookies: [{ name: 'a', value: '1', domain: 'github.io' }] },
        pages,
        DEFAULT_PLANS.pro,
      ),
    /cookies\[0\]\.domain github\.io is a public suffix/,
  );
});

test('device: a preset fills the viewport, scale, agent, mobile and touch; given fields win', () => {
  const phone = resolve({ device: 'iphone-15' }).render;
  assert.deepEqual(
    [phone.width, phone.height, phone.deviceScaleFactor, phone.mobile, phone.hasTouch],
    [393, 659, 3, true, true],
  );
  assert.match(phone.userAgent ?? '', /iPhone/);
  const mine = resolve({
    device: 'iphone-15',
    width: 500,
    device_scale_factor: 2,
    user_agent: 'Mine/1',
    has_touch: false,
  }).render;
  assert.deepEqual(
    [mine.width, mine.height, mine.deviceScaleFactor, mine.userAgent, mine.mobile, mine.hasTouch],
    [500, 659, 2, 'Mine/1', true, false],
  );
  const laptop = resolve({ device: 'laptop' }).render;
  assert.deepEqual(
    [laptop.width, laptop.height, laptop.userAgent, laptop.mobile],
    [1366, 768, null, false],
  );
  assert.equal(
    refusal({ device: 'nokia-3310' }),
    'invalid_request: device "nokia-3310" is not a known preset (GET /v1/devices lists them)',
  );
});

test("device: the plan's bounds hold (size capped, a preset's scale capped)", () => {
  const free = resolve({ device: 'iphone-15' }, DEFAULT_PLANS.free).render;
  assert.deepEqual([free.width, free.height, free.deviceScaleFactor], [393, 659, 1]);
  const big = resolve({ device: 'desktop-4k' }, DEFAULT_PLANS.free).render;
  assert.deepEqual([big.width, big.height], [1920, 1080]);
  // An explicit scale above the plan's is still refused.
  assert.equal(
    refusal({ device: 'iphone-15', device_scale_factor: 2 }),
    'plan_restriction: device_scale_factor other than 1 is not available on the free plan',
  );
});

test('landscape swaps the width and height, then caps them', () => {
  const turned = resolve({ device: 'iphone-15', landscape: true }).render;
  assert.deepEqual([turned.width, turned.height, turned.mobile], [659, 393, true]);
  const custom = resolve({ width: 600, height: 900, landscape: true }).render;
  assert.deepEqual([custom.width, custom.height], [900, 600]);
  const capped = resolve({ width: 1920, height: 1080, landscape: true }, DEFAULT_PLANS.free).render;
  assert.deepEqual([capped.width, capped.height], [1080, 1080]);
  // The swap takes the sizes as asked for, then caps: the long side is not lost to a cap
  // applied before the turn.
  const ipad = resolve({ device: 'ipad-pro-12-9', landscape: true }, DEFAULT_PLANS.free).render;
  assert.deepEqual([ipad.width, ipad.height], [1366, 1024]);
  const tall = resolve({ width: 800, height: 1500, landscape: true }, DEFAULT_PLANS.free).render;
  assert.deepEqual([tall.width, tall.height], [1500, 800]);
  const mixed = resolve({ device: 'iphone-15', width: 500, landscape: true }).render;
  assert.deepEqual(
    [mixed.width, mixed.height],
    [659, 500],
    "the request's width, the preset's height",
  );
  const defaults = resolve({ landscape: true }).render;
  assert.deepEqual([defaults.width, defaults.height], [1080, 1920]);
  assert.deepEqual(
    cacheKeyFor('u', resolve({ device: 'iphone-15', landscape: true }).render),
    cacheKeyFor('u', resolve({ device: 'iphone-15', width: 659, height: 393 }).render),
    'the same viewport is the same cache entry, however it was asked for',
  );
});

test('pdf: Pro only, its options only with it, and no image-only fields with it', () => {
  assert.equal(
    refusal({ format: 'pdf' }),
    'plan_restriction: format pdf is not available on the free plan',
  );
  assert.equal(
    refusal({ pdf_paper: 'letter' }, DEFAULT_PLANS.pro),
    'invalid_request: pdf_paper applies to format pdf only',
  );
  assert.equal(
    refusal({ format: 'png', pdf_single_page: false }, DEFAULT_PLANS.pro),
    'invalid_request: pdf_single_page applies to format pdf only',
  );
  assert.equal(
    refusal({ format: 'pdf', full_page: true, quality: 50 }, DEFAULT_PLANS.pro),
    'invalid_request: full_page, quality do not apply to format pdf',
  );
  const pdf = resolve({ format: 'pdf', pdf_paper: 'a3', pdf_print_background: false }).render;
  assert.deepEqual(
    [pdf.format, pdf.pdfPaper, pdf.pdfPrintBackground, pdf.pdfLandscape],
    ['pdf', 'a3', false, false],
  );
});

test('image_width, image_height, image_fit: within the plan, not with pdf, in the key', () => {
  const one = resolve({ image_width: 400 }).render;
  assert.deepEqual([one.imageWidth, one.imageHeight, one.imageFit], [400, null, 'cover']);
  // A fit with one side is no choice: it stays out of the options and the key.
  const fitOne = resolve({ image_width: 400, image_fit: 'fill' }).render;
  assert.equal(fitOne.imageFit, 'cover');
  assert.equal(cacheKeyFor('o', fitOne), cacheKeyFor('o', one));
  const both = resolve({ image_width: 400, image_height: 300, image_fit: 'contain' }).render;
  assert.deepEqual([both.imageWidth, both.imageHeight, both.imageFit], [400, 300, 'contain']);
  const keys = new Set(
    [
      {},
      { image_width: 400 },
      { image_width: 401 },
      { image_height: 400 },
      { image_width: 400, image_height: 300 },
      { image_width: 400, image_height: 300, image_fit: 'contain' as const },
      { image_width: 400, image_height: 300, image_fit: 'fill' as const },
    ].map((input) => cacheKeyFor('o', resolve(input).render)),
  );
  assert.equal(keys.size, 7);
  assert.match(refusal({ image_width: 1921 }), /invalid_request: image_width may be at most 1920/);
  assert.match(
    refusal({ image_height: 2161 }, DEFAULT_PLANS.pro),
    /invalid_request: image_height may be at most 2160 on the pro plan/,
  );
  assert.match(
    refusal({ format: 'pdf', image_height: 100 }, DEFAULT_PLANS.pro),
    /image_height is not allowed with format pdf/,
  );
});
