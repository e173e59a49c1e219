/**
 * fail_on_http_error and the page actions through the HTTP surface: the 502 target_error and
 * its quota, the 400s of refused combinations and sizes, the body limit with both injections
 * at their largest.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page } from '../helpers/fixtures.ts';

describe('capture API: page actions and fail_on_http_error', () => {
  let t: TestApp;
  let site: FixtureSite;

  before(async () => {
    ({ t, site } = await startCaptureSite({
      '/ok': page('<p>ok</p>'),
      '/gone': (_req, res) => {
        res.writeHead(410, { 'content-type': 'text/html' }).end(page('<p>gone</p>'));
      },
      '/broken': (_req, res) => {
        res.writeHead(503, { 'content-type': 'text/html' }).end(page('<p>down</p>'));
      },
    }));
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, body: Record<string, unknown>) => postCapture(t, key, body);
  const used = async (key: string) =>
    (
      (await (await fetch(`${t.url}/v1/usage`, { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  it('fail_on_http_error: 502 target_error naming the status, no quota spent', async () => {
    const key = await newApiKey(t);
    for (const [path, status] of [
      ['/gone', 410],
      ['/broken', 503],
    ] as const) {
      const res = await capture(key, { url: `${site.origin}${path}`, fail_on_http_error: true });
      assert.equal(res.status, 502);
      const body = (await res.json()) as { error: string; code: string };
      assert.equal(body.code, 'target_error');
      assert.match(body.error, new RegExp(`HTTP ${status}`));
    }
    assert.equal(await used(key), 0);
    // Without it the error page is the image, and its status is in the header.
    const plain = await capture(key, { url: `${site.origin}/gone` });
    assert.equal(plain.status, 201);
    assert.equal(plain.headers.get('x-target-status'), '410');
    const fine = await capture(key, { url: `${site.origin}/ok`, fail_on_http_error: true });
    assert.equal(fine.status, 201);
    assert.equal(await used(key), 2);
  });

  it('refuses bad actions with a 400 naming them, spending no quota', async () => {
    const key = await newApiKey(t);
    const url = `${site.origin}/ok`;
    for (const [body, message] of [
      [{ scroll_into_view: '#a', full_page: true }, /^scroll_into_view is for viewport captures/],
      [{ styles: 'x'.repeat(32_769) }, /^styles must be at most 32768 characters$/],
      [{ scripts: '' }, /^scripts must not be empty$/],
      [{ click: '##' }, /click|##/],
      [{ click: '#missing' }, /^click selector "#missing" matched no element$/],
      [{ scripts: 'throw new TypeError("nope")' }, /^scripts threw an error: .*nope/],
      [{ fail_on_http_error: 'yes' }, /^fail_on_http_error must be a boolean/],
    ] as const) {
      const res = await capture(key, { url, ...body });
      const text = await res.text();
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${text}`);
      assert.match((JSON.parse(text) as { error: string }).error, message);
    }
    assert.equal(await used(key), 0);
  });

  it('keeps the 64 KiB body limit with both injections at their largest', async () => {
    const key = await newApiKey(t);
    const res = await capture(key, {
      url: `${site.origin}/ok`,
      styles: `/*${'s'.repeat(32_764)}*/`,
      scripts: `/*${'j'.repeat(32_764)}*/`,
    });
    assert.equal(res.status, 413);
  });
});
