/**
 * A page that replaces its own document while it is captured (a script reload loop, as some
 * consent managers do after an opt-out): each capture ends 201, or 502 `target_error` naming
 * the navigation, or (when Chromium's screenshot waits on a document that keeps being
 * replaced) 504 at the deadline; no unit spent on either, never 500 (docs/errors.md).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

/** Reloads itself shortly after every load, forever. */
const RELOADING = page(
  '<h1 id="title" style="height:3000px">reloading</h1>',
  `<title>reloading</title><script>
    addEventListener('load', () => setTimeout(() => location.reload(), 40));
  </script>`,
);

describe('a page that navigates during its capture', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;

  before(async () => {
    site = await startSite({ '/reload': RELOADING, '/still': page('<h1>still</h1>') });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_TIMEOUT_MS: '8000' },
      plans: { free: { rate_per_minute: 1000, monthly_quota: 1000 } },
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

  it('answers 201, 502 target_error or 504, never 500, and charges only what it delivers', async () => {
    const bodies = [
      { url: `${site.origin}/reload`, metadata: true },
      { url: `${site.origin}/reload`, full_page: true, cache_ttl: 0 },
      { url: `${site.origin}/reload`, selector: '#title', cache_ttl: 0 },
      { url: `${site.origin}/reload`, metadata: true, cache_ttl: 0, delay: 200 },
      { url: `${site.origin}/reload`, full_page: true, cache_ttl: 0, delay: 100 },
    ];
    let delivered = 0;
    for (const body of bodies) {
      const res = await capture(body);
      const text = await res.text();
      assert.ok([201, 502, 504].includes(res.status), `${res.status} ${text}`);
      if (res.status === 201) delivered++;
      else if (res.status === 502) {
        const error = JSON.parse(text) as { code: string; error: string };
        assert.equal(error.code, 'target_error');
        assert.match(error.error, /navigated away while it was being captured/);
      } else assert.equal((JSON.parse(text) as { code: string }).code, 'render_timeout');
    }
    const usage = (await (
      await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })
    ).json()) as { used: number };
    assert.equal(usage.used, delivered, 'a unit for each image delivered, none for the 502s');
    assert.equal((await capture({ url: `${site.origin}/still` })).status, 201);
  });
});
