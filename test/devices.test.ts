/**
 * The device presets: at least twenty, each phone or tablet exactly puppeteer's descriptor
 * of the name it cites, and GET /v1/devices lists them all, publicly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { KnownDevices } from 'puppeteer-core';
import { BOUNDS } from '../src/domain/bounds.ts';
import { DEVICES } from '../src/domain/captures/devices.ts';
import { startApp, type TestApp } from './helpers/app.ts';

describe('device presets', () => {
  it('are at least twenty phones, tablets and laptops with stable slugs', () => {
    assert.ok(DEVICES.length >= 20, `${DEVICES.length} presets`);
    assert.equal(new Set(DEVICES.map((d) => d.name)).size, DEVICES.length, 'unique names');
    for (const d of DEVICES) {
      assert.match(d.name, /^[a-z0-9]+(-[a-z0-9]+)*$/, d.name);
      assert.ok(d.deviceScaleFactor >= BOUNDS.capture.minDeviceScaleFactor, d.name);
      assert.ok(d.deviceScaleFactor <= BOUNDS.capture.maxDeviceScaleFactor, d.name);
    }
    const kinds = (mobile: boolean) => DEVICES.filter((d) => d.mobile === mobile).length;
    assert.ok(kinds(true) >= 10 && kinds(false) >= 5);
  });

  it("take every phone and tablet value from puppeteer's own descriptors", () => {
    for (const d of DEVICES.filter((x) => x.source !== null)) {
      const known = KnownDevices[d.source as keyof typeof KnownDevices];
      assert.ok(known, `${d.source} is a puppeteer device`);
      assert.deepEqual(
        {
          width: d.width,
          height: d.height,
          deviceScaleFactor: d.deviceScaleFactor,
          mobile: d.mobile,
          hasTouch: d.hasTouch,
          userAgent: d.userAgent,
        },
        {
          width: known.viewport.width,
          height: known.viewport.height,
          deviceScaleFactor: known.viewport.deviceScaleFactor,
          mobile: known.viewport.isMobile,
          hasTouch: known.viewport.hasTouch,
          userAgent: known.userAgent,
        },
        d.name,
      );
    }
  });

  describe('GET /v1/devices', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({ db: 'sqlite' });
    });
    after(() => t?.close());

    it('lists every preset without a key', async () => {
      const res = await t.fetch('/v1/devices');
      assert.equal(res.status, 200);
      const body = (await res.json()) as { data: Record<string, unknown>[] };
      assert.equal(body.data.length, DEVICES.length);
      const phone = body.data.find((d) => d.name === 'iphone-15');
      assert.deepEqual(phone, {
        name: 'iphone-15',
        label: 'iPhone 15',
        width: 393,
        height: 659,
        device_scale_factor: 3,
        mobile: true,
        has_touch: true,
        user_agent: KnownDevices['iPhone 15'].userAgent,
      });
      assert.equal(body.data.find((d) => d.name === 'laptop')?.user_agent, null);
    });
  });
});
