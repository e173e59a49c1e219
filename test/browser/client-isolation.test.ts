/**
 * What no reset of a browser context clears, its HTTP authentication cache and its open
 * sockets, never reaches another client's capture: a context that rendered for one client
 * renders only for that client again (docs/security.md, "Isolation").
 *
 * One slot and one page per slot, so that without the rule every capture would run in the
 * same context.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type AuthSite, startAuthSite } from '../helpers/auth-site.ts';
import { renderOptions, startRenderer, type TestRenderer } from './helpers.ts';

describe('isolation between clients: HTTP auth cache and sockets', () => {
  let site: AuthSite;
  let t: TestRenderer;

  before(async () => {
    site = await startAuthSite();
    t = await startRenderer({ concurrency: 1, pagesPerSlot: 1 });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (path: string, client: string) =>
    t.renderer.render(
      renderOptions({ url: `${site.origin}${path}`, waitForSelector: 'body[data-done]' }),
      { deadline: Date.now() + 20_000, client: { id: client, maxConcurrent: 1 } },
    );

  it("another client's capture sends none of the credentials one client planted", async () => {
    site.seen.length = 0;
    await capture('/plant', 'user:1');
    // The credentials were really planted: the challenge was answered with them.
    const planted = site.protectedRequests();
    assert.ok(
      planted.some((s) => s.authorization !== undefined),
      `A's XHR authenticated: ${JSON.stringify(planted)}`,
    );
    // The same client again: its own context, auth cache included, is reused.
    site.seen.length = 0;
    await capture('/probe', 'user:1');
    const again = site.protectedRequests();
    assert.ok(
      again.some((s) => s.authorization !== undefined),
      `the same client keeps its context: ${JSON.stringify(again)}`,
    );

    site.seen.length = 0;
    await capture('/probe', 'user:2');
    const probes = site.protectedRequests();
    assert.ok(probes.length >= 2, `B asked for the realm: ${JSON.stringify(site.seen)}`);
    assert.deepEqual(
      probes.map((s) => s.authorization),
      probes.map(() => undefined),
      `B's requests carried no Authorization: ${JSON.stringify(probes)}`,
    );
  });

  it("another client's capture never gets a connection one client opened", async () => {
    site.seen.length = 0;
    await capture('/plain', 'user:3');
    const portsOfA = new Set(site.seen.map((s) => s.remotePort));
    assert.ok(site.seen.length >= 2, JSON.stringify(site.seen));
    // Straight after, while the fixture still keeps A's connections open.
    site.seen.length = 0;
    await capture('/plain', 'user:4');
    assert.ok(site.seen.length >= 2, JSON.stringify(site.seen));
    for (const s of site.seen) {
      assert.ok(!portsOfA.has(s.remotePort), `B reused A's connection: ${JSON.stringify(s)}`);
    }
  });
});
