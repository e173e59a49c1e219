/**
 * `device`, `landscape`, `mobile` and `has_touch` through the HTTP surface: two accounts at
 * once, each image the size of its own device; the plan's bounds hold; 400s name the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import type { FixtureSite } from '../helpers/fixtures.ts';
import { page } from '../helpers/fixtures.ts';

describe('capture API: devices', () => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    ({ t, site } = await startCaptureSite({ '/': page('<p>device</p>') }));
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const size = async (res: Response) => {
    assert.equal(res.status, 201, await res.clone().text());
    const body = (await res.json()) as { width: number; height: number };
    return [body.width, body.height];
  };

  it("gives each account the image of its own device (Free: at the plan's scale)", async () => {
    const [a, b] = await Promise.all([newApiKey(t), newApiKey(t)]);
    const url = `${site.origin}/`;
    const [phone, tablet] = await Promise.all([
      postCapture(t, a, { url, width: undefined, height: undefined, device: 'iphone-15' }),
      postCapture(t, b, {
        url,
        width: undefined,
        height: undefined,
        device: 'ipad-mini',
        landscape: true,
      }),
    ]);
    assert.deepEqual(await size(phone), [393, 659]);
    assert.deepEqual(await size(tablet), [1024, 768]);
    // An explicit width wins over the preset's.
    const wide = await postCapture(t, a, {
      url,
      width: 500,
      height: undefined,
      device: 'iphone-15',
    });
    assert.deepEqual(await size(wide), [500, 659]);
  });

  it('refuses an unknown preset or a malformed flag, naming it', async () => {
    const key = await newApiKey(t);
    for (const [body, message] of [
      [{ device: 'nokia-3310' }, /^device "nokia-3310" is not a known preset/],
      [{ device: '' }, /^device must not be empty$/],
      [{ mobile: 'yes' }, /^mobile must be a boolean/],
      [{ has_touch: 1 }, /^has_touch must be a boolean/],
      [{ landscape: null }, /^landscape must be a boolean/],
    ] as const) {
      const res = await postCapture(t, key, { url: `${site.origin}/`, ...body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(((await res.json()) as { error: string }).error, message);
    }
  });
});
