/**
 * DNS and what refusals say, through the HTTP surface (docs/egress.md: "DNS", "What
 * refusals say", the host's own addresses). Names are answered by an injected resolver: no
 * real DNS, and every name that is let through points at the loopback fixture site.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DnsAnswer, Resolver } from '../../src/adapters/egress/resolver.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

/** An address the test pretends is one of the machine's own interfaces. Never connected to. */
const OWN_ADDRESS = '1.2.3.7';

describe('DNS lookups, refusals and the host’s own addresses', () => {
  let t: TestApp;
  let site: FixtureSite;
  let keyA = '';
  let keyB = '';
  const asked: string[] = [];

  /**
   * `slowN.example` never answers; `intranet.example` is private; `own.example` is one of the
   * machine's own addresses; any other name answers at once with the loopback fixture.
   */
  const resolver: Resolver = {
    resolve: (name) => {
      asked.push(name);
      if (name.startsWith('slow')) return new Promise<DnsAnswer>(() => {});
      if (name === 'intranet.example') {
        return Promise.resolve({ addresses: ['10.1.2.3'], ttlSeconds: 60 });
      }
      if (name === 'own.example') {
        return Promise.resolve({ addresses: [OWN_ADDRESS], ttlSeconds: 60 });
      }
      return Promise.resolve({ addresses: ['127.0.0.1'], ttlSeconds: 60 });
    },
  };

  before(async () => {
    site = await startSite({ '/': page('<h1>fixture</h1>'), '/b': page('<h1>b</h1>') });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { free: { rate_per_minute: 1000 } },
      resolver,
      interfaceAddresses: () => ['127.0.0.1', '::1', OWN_ADDRESS],
    });
    keyA = await newApiKey(t);
    keyB = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, url: string) =>
    t.fetch('/v1/screenshots', {
      method: 'POST',
      json: { url, width: 400, height: 300 },
      headers: { 'x-api-key': key },
    });

  it("twenty slow names from one account do not delay another account's capture", async (ctx) => {
    // The browser is started and warm, so what is timed below is the lookup and one render.
    const warm = await capture(keyB, `http://warm.example:${site.port}/`);
    assert.equal(warm.status, 201, await warm.clone().text());

    const slow = Array.from({ length: 20 }, (_, i) =>
      capture(keyA, `http://slow${i}.example:${site.port}/`),
    );
    const deadline = Date.now() + 30_000;
    // Some of them are being asked now (all a client may have in flight, or, on the old code,
    // every lookup slot of the process).
    const slowAsked = () => asked.filter((n) => n.startsWith('slow')).length;
    while (slowAsked() < 2 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.ok(slowAsked() >= 2, 'slow lookups in flight');

    const started = performance.now();
    const res = await capture(keyB, `http://quick.example:${site.port}/b`);
    const elapsed = performance.now() - started;
    ctx.diagnostic(`other account's capture: ${res.status} in ${Math.round(elapsed)} ms`);
    assert.equal(res.status, 201, await res.clone().text());
    // Before: its lookup waited behind the slow ones and failed after 5 s (502).
    assert.ok(elapsed < 30_000, `${elapsed} ms`);

    // The slow names end on their own after the lookup deadline, as target_unreachable.
    for (const r of await Promise.all(slow)) {
      assert.equal(r.status, 502);
      const body = (await r.json()) as { code: string; error: string };
      assert.equal(body.code, 'target_unreachable');
      assert.match(body.error, /could not resolve host slow\d+\.example/);
    }
    // A dead name is not asked again within 10 s: its failure is cached.
    const dead = asked.find((n) => n.startsWith('slow')) as string;
    const again = await capture(keyA, `http://${dead}:${site.port}/`);
    assert.equal(again.status, 502);
    assert.equal(asked.filter((n) => n === dead).length, 1);
  });

  it('a name resolving to a private address: 400 naming the host, never the address', async () => {
    const res = await capture(keyA, `http://intranet.example:${site.port}/`);
    assert.equal(res.status, 400);
    const text = await res.text();
    const body = JSON.parse(text) as { code: string; error: string };
    assert.equal(body.code, 'url_not_allowed');
    assert.match(body.error, /intranet\.example resolves to a private address/);
    assert.doesNotMatch(text, /10\.1\.2\.3|\d+\.\d+\.\d+\.\d+/);
    for (const [name, value] of res.headers) {
      assert.doesNotMatch(value, /10\.1\.2\.3/, name);
    }
  });

  it("the host's own address is refused on any port before any connection", async () => {
    for (const url of [
      `http://own.example:${site.port}/`,
      'https://own.example/',
      `http://${OWN_ADDRESS}/`,
      `http://${OWN_ADDRESS}:8080/`,
    ]) {
      const res = await capture(keyA, url);
      assert.equal(res.status, 400, url);
      const body = (await res.json()) as { code: string; error: string };
      assert.equal(body.code, 'url_not_allowed', url);
      assert.match(body.error, /(is|resolves to) a non-public address$/, url);
      if (url.includes('own.example')) assert.doesNotMatch(body.error, /1\.2\.3\.7/);
    }
  });
});
