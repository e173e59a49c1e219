/** `clip` through the HTTP surface: its image size and the 400s naming what is wrong. */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page } from '../helpers/fixtures.ts';

describe('capture API: clip', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;

  before(async () => {
    ({ t, site } = await startCaptureSite({ '/': page('<div style="height:2000px">clip</div>') }));
    key = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (body: Record<string, unknown>) =>
    postCapture(t, key, { url: `${site.origin}/`, width: 400, height: 300, ...body });

  it('answers with the region as the image', async () => {
    const res = await capture({ clip: { x: 10, y: 500, width: 123, height: 45 } });
    assert.equal(res.status, 201);
    const body = (await res.json()) as { width: number; height: number };
    assert.deepEqual([body.width, body.height], [123, 45]);
  });

  it('refuses a clip it cannot take with a 400 naming the field', async () => {
    const box = { x: 0, y: 0, width: 10, height: 10 };
    for (const [extra, message] of [
      [{ clip: box, full_page: true }, 'clip is not allowed with full_page or selector'],
      [{ clip: box, selector: 'div' }, 'clip is not allowed with full_page or selector'],
      [{ clip: { x: 0, y: 0, width: 10 } }, 'clip.height is required'],
      [{ clip: { ...box, x: -1 } }, 'clip.x must be >= 0'],
      [{ clip: { ...box, width: 0 } }, 'clip.width must be >= 1'],
      [{ clip: { ...box, z: 1 } }, 'unknown field "clip.z"'],
      [{ clip: 'top' }, 'clip must be an object'],
    ] as const) {
      const res = await capture(extra);
      assert.equal(res.status, 400, JSON.stringify(extra));
      assert.equal(((await res.json()) as { error: string }).error, message);
    }
  });
});
