import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEVICES } from '../../../domain/captures/devices.ts';
import {
  chromiumBrands,
  clientHintsOf,
  engineOf,
  presentationOf,
  userAgentOverride,
} from './engine.ts';

const SHELL_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.8078.129 Safari/537.36';
const FULL_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36';
const CHROME_UA =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36';

describe('engineOf', () => {
  it('tells the shell from the full browser by the product it reports', () => {
    assert.equal(engineOf('HeadlessChrome/156.0.8078.129'), 'shell');
    assert.equal(engineOf('Chrome/156.0.8078.129'), 'full');
    assert.equal(engineOf('Firefox/130.0'), null);
    assert.equal(engineOf('Chrome/156'), null);
  });
});

describe('chromiumBrands', () => {
  it("makes Chromium's GREASE brand for a version, as Chromium's own tests give it", () => {
    // components/embedder_support/user_agent_utils_unittest.cc: 84 -> "Not;A=Brand" 8,
    // 86 -> "Not?A_Brand" 24.
    assert.deepEqual(chromiumBrands(84, null)[0], { brand: 'Not;A=Brand', version: '8' });
    assert.deepEqual(chromiumBrands(86, '86.0.0.0')[0], {
      brand: 'Not?A_Brand',
      version: '24.0.0.0',
    });
    // Seen on Chromium 156 (the full browser, nothing overridden).
    assert.deepEqual(chromiumBrands(156, null), [
      { brand: 'Not:A-Brand', version: '8' },
      { brand: 'Chromium', version: '156' },
    ]);
    // An odd version puts Chromium first.
    assert.equal(chromiumBrands(157, null)[0]?.brand, 'Chromium');
  });
});

describe('presentationOf', () => {
  for (const [engine, product, ua] of [
    ['shell', 'HeadlessChrome/156.0.8078.129', SHELL_UA],
    ['full', 'Chrome/156.0.8078.129', FULL_UA],
  ] as const) {
    it(`the ${engine} presents as Chrome 156 on Linux, the same on both engines`, () => {
      const p = presentationOf(product, ua, 'x64');
      assert.ok(p);
      assert.equal(p.engine, engine);
      assert.equal(p.version, '156.0.8078.129');
      assert.equal(p.userAgent, CHROME_UA);
      assert.deepEqual(p.clientHints, {
        brands: [
          { brand: 'Not:A-Brand', version: '8' },
          { brand: 'Chromium', version: '156' },
        ],
        fullVersionList: [
          { brand: 'Not:A-Brand', version: '8.0.0.0' },
          { brand: 'Chromium', version: '156.0.8078.129' },
        ],
        platform: 'Linux',
        platformVersion: '',
        architecture: 'x86',
        model: '',
        mobile: false,
        bitness: '64',
        wow64: false,
        formFactors: ['Desktop'],
      });
    });
  }

  it('an ARM engine says so', () => {
    const ua = SHELL_UA.replace('x86_64', 'aarch64');
    const p = presentationOf('HeadlessChrome/156.0.8078.129', ua, 'arm64');
    assert.equal(p?.clientHints.architecture, 'arm');
    assert.equal(p?.clientHints.bitness, '64');
  });

  it('a build we do not know keeps its own user agent', () => {
    assert.equal(presentationOf('Brave/1.0', SHELL_UA), null);
  });
});

describe('userAgentOverride', () => {
  const presentation = presentationOf('HeadlessChrome/156.0.8078.129', SHELL_UA, 'x64');

  it("without a user_agent: the presentation's, with the locale's Accept-Language", () => {
    const o = userAgentOverride({ presentation, userAgent: null, locale: 'de-DE' });
    assert.equal(o.userAgent, CHROME_UA);
    assert.equal(o.acceptLanguage, 'de-DE');
    assert.deepEqual(o.userAgentMetadata, presentation?.clientHints);
  });

  it('a Safari user agent sends no client hints, as Safari sends none', () => {
    const safari = DEVICES.find((d) => d.name === 'iphone-15')?.userAgent ?? '';
    const o = userAgentOverride({ presentation, userAgent: safari, locale: null });
    assert.deepEqual(o, { userAgent: safari, acceptLanguage: 'en-US,en' });
  });

  it("an Android Chrome preset's client hints are Android's, mobile, with its model", () => {
    const pixel = DEVICES.find((d) => d.name === 'pixel-5')?.userAgent ?? '';
    assert.match(pixel, /Android.*Chrome/);
    const hints = userAgentOverride({
      presentation,
      userAgent: pixel,
      locale: null,
    }).userAgentMetadata;
    assert.ok(hints);
    assert.equal(hints.platform, 'Android');
    assert.equal(hints.mobile, true);
    assert.equal(hints.model, 'Pixel 5');
    assert.deepEqual(hints.formFactors, ['Mobile']);
    const major = /Chrome\/(\d+)/.exec(pixel)?.[1];
    assert.ok(hints.brands.some((b) => b.brand === 'Chromium' && b.version === major));
  });

  it('every preset of a Chrome 90 or later gets hints that match it; no other preset gets any', () => {
    for (const d of DEVICES) {
      if (d.userAgent === null) continue;
      const hints = clientHintsOf(d.userAgent, 'x64');
      const chrome = Number(/Chrome\/(\d+)/.exec(d.userAgent)?.[1] ?? 0) >= 90;
      assert.equal(hints !== null, chrome, d.name);
      if (hints) assert.equal(hints.mobile, /Mobile/.test(d.userAgent), d.name);
    }
  });

  it('a model named with its build id is the model alone', () => {
    const pixel3 = DEVICES.find((d) => d.name === 'pixel-3')?.userAgent ?? '';
    const hints = clientHintsOf(pixel3.replace(/Chrome\/66/, 'Chrome/120'), 'x64');
    assert.equal(hints?.model, 'Pixel 3');
    assert.equal(hints?.platformVersion, '9');
  });

  it('another Chromium browser (Edge) keeps its own user agent, no Chrome hints', () => {
    const edge = `${CHROME_UA} Edg/156.0.0.0`;
    assert.equal(
      userAgentOverride({ presentation, userAgent: edge, locale: null }).userAgentMetadata,
      undefined,
    );
  });
});
