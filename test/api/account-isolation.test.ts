/**
 * Isolation between accounts through the API (docs/security.md): Basic credentials
 * that one account's captured page plants in the browser's HTTP authentication cache (an XHR
 * with user and password) are not sent by the next account's capture of the same realm.
 * One render slot, so both captures would otherwise share a browser context.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type AuthSite, startAuthSite } from '../helpers/auth-site.ts';
import { sleep } from '../helpers/fixtures.ts';

describe('isolation between accounts', () => {
  let t: TestApp;
  let site: AuthSite;

  before(async () => {
    site = await startAuthSite();
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '1' },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  async function capture(key: string, path: string): Promise<void> {
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url: `${site.origin}${path}`, wait_for_selector: 'body[data-done]' },
      headers: { 'x-api-key': key },
    });
    assert.equal(res.status, 201, await res.text());
  }

  it("the next account's capture of a realm sends none of the credentials planted before", async () => {
    const a = await newApiKey(t);
    const b = await newApiKey(t);
    await capture(a, '/plant');
    assert.ok(
      site.protectedRequests().some((s) => s.authorization !== undefined),
      `A's page authenticated: ${JSON.stringify(site.seen)}`,
    );
    // Time for A's page to be reset and idle again, so it could be taken by the next capture.
    await sleep(1_000);
    site.seen.length = 0;
    await capture(b, '/probe');
    const probes = site.protectedRequests();
    assert.ok(probes.length >= 2, `B asked for the realm: ${JSON.stringify(site.seen)}`);
    assert.deepEqual(
      probes.map((s) => s.authorization),
      probes.map(() => undefined),
      `B's requests carried no Authorization: ${JSON.stringify(probes)}`,
    );
  });
});
