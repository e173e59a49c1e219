/**
 * `response_type: "image"`: the 201 carries the image bytes and the JSON's facts as headers;
 * a cache hit answers the same bytes; an unknown value is a 400 naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, imageSize, page } from '../helpers/fixtures.ts';

describe('capture API: response_type image', () => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    ({ t, site } = await startCaptureSite({ '/': page('<h1>bytes</h1>') }));
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  it('answers the image bytes with the facts in headers, the same on a hit', async () => {
    const key = await newApiKey(t);
    const body = { url: `${site.origin}/`, format: 'jpeg', response_type: 'image' };
    const res = await postCapture(t, key, body);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('content-type'), 'image/jpeg');
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.deepEqual(imageSize(bytes), { format: 'jpeg', width: 320, height: 200 });
    const url = res.headers.get('x-image-url') ?? '';
    assert.match(url, /\/images\/[A-Za-z0-9_-]{22}\.jpg$/);
    assert.deepEqual(Buffer.from(await (await fetch(url)).arrayBuffer()), bytes);
    assert.ok(!Number.isNaN(Date.parse(res.headers.get('x-expires-at') ?? '')));
    assert.equal(res.headers.get('x-cached'), 'false');
    assert.deepEqual(
      [res.headers.get('x-quota-used'), res.headers.get('x-quota-limit')],
      ['1', '100'],
    );
    assert.equal(res.headers.get('x-screenshot-id'), null, 'Free records are not listable');
    const hit = await postCapture(t, key, body);
    assert.equal(hit.headers.get('x-cached'), 'true');
    assert.equal(hit.headers.get('x-image-url'), url);
    assert.deepEqual(Buffer.from(await hit.arrayBuffer()), bytes);
  });

  it('gives a Pro capture its id, and refuses an unknown value', async () => {
    const key = await newApiKey(t, { plan: 'pro' });
    const res = await postCapture(t, key, { url: `${site.origin}/`, response_type: 'image' });
    assert.equal(res.status, 201);
    assert.match(res.headers.get('x-screenshot-id') ?? '', /^\d+$/);
    const bad = await postCapture(t, key, { url: `${site.origin}/`, response_type: 'binary' });
    assert.equal(bad.status, 400);
    assert.equal(
      ((await bad.json()) as { error: string }).error,
      'response_type must be one of json, image',
    );
  });
});
