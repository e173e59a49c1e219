/**
 * Warnings and `fail_on` through POST /v1/screenshots (docs/api.md, "Warnings"): the 201
 * carries them (and a cache hit the same), `X-Capture-Warnings` names them, and `fail_on`
 * makes a 422 `capture_rejected` that stores nothing and spends no quota. On both databases:
 * the warnings are kept with the record.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { describeEachDatabase, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describeEachDatabase('capture warnings and fail_on', (db) => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;

  before(async () => {
    site = await startSite({
      '/blank': page(''),
      '/content': page('<h1 style="font:40px serif">Content</h1><p>and more text</p>'),
    });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { free: { rate_per_minute: 1000 } },
    });
    key = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (body: Record<string, unknown>) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { width: 400, height: 300, ...body },
    });
  const used = async () =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  it('a page with content: warnings is there, and empty', async () => {
    const res = await capture({ url: `${site.origin}/content` });
    const body = (await res.json()) as CaptureAnswer;
    assert.equal(res.status, 201, JSON.stringify(body));
    assert.deepEqual(body.warnings, []);
    assert.equal(res.headers.get('x-capture-warnings'), null);
  });

  it('fail_on a warning found: 422 naming it, no unit spent, nothing cached', async () => {
    const before = await used();
    const res = await capture({ url: `${site.origin}/blank`, fail_on: ['blank_image'] });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 422, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'warnings']);
    assert.equal(body.code, 'capture_rejected');
    assert.match(String(body.error), /rejected \(fail_on\): blank_image \(the image is one colour/);
    assert.deepEqual(
      (body.warnings as { code: string }[]).map((w) => w.code),
      ['blank_image'],
    );
    assert.equal(await used(), before);
    // Nothing was stored for it: the same request renders (and is rejected) again.
    const again = await capture({ url: `${site.origin}/blank`, fail_on: ['blank_image'] });
    assert.equal(again.status, 422);
    assert.equal(await used(), before);
  });

  it('without fail_on the same page is a 201 carrying the warning, and so is its cache hit', async () => {
    const first = await capture({ url: `${site.origin}/blank` });
    const body = (await first.json()) as CaptureAnswer;
    assert.equal(first.status, 201);
    assert.deepEqual(
      body.warnings.map((w) => w.code),
      ['blank_image'],
    );
    assert.equal(first.headers.get('x-capture-warnings'), 'blank_image');
    const hit = await capture({ url: `${site.origin}/blank` });
    const cached = (await hit.json()) as CaptureAnswer;
    assert.equal(cached.cached, true);
    assert.deepEqual(cached.warnings, body.warnings);
    const image = await capture({ url: `${site.origin}/blank`, response_type: 'image' });
    assert.equal(image.status, 201);
    assert.equal(image.headers.get('x-capture-warnings'), 'blank_image');
  });

  it('fail_on a warning that is not there: 201', async () => {
    const res = await capture({ url: `${site.origin}/content`, fail_on: ['blank_image'] });
    assert.equal(res.status, 201);
  });

  it('an unknown code or a repeated one is a 400 naming the field', async () => {
    for (const fail_on of [['no_such_warning'], ['blank_image', 'blank_image'], 'blank_image']) {
      const res = await capture({ url: `${site.origin}/content`, fail_on });
      const body = (await res.json()) as { error: string; code: string };
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(body.error, /fail_on/);
    }
  });
});
