import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BOUNDS } from '../../domain/bounds.ts';
import { DnsBusyError, DnsCache, DnsTimeoutError, LookupBound } from './dns-cache.ts';
import type { DnsAnswer, Resolver } from './resolver.ts';

/**
 * A resolver under the test's control: each query waits until the test answers it (or
 * never), and every query is recorded. Never touches DNS.
 */
function heldResolver() {
  const queries: Array<{
    name: string;
    answer: (a: DnsAnswer) => void;
    fail: (code: string) => void;
  }> = [];
  const resolver: Resolver = {
    resolve: (name) =>
      new Promise<DnsAnswer>((resolve, reject) => {
        queries.push({
          name,
          answer: resolve,
          fail: (code) => reject(Object.assign(new Error(`query ${code} ${name}`), { code })),
        });
      }),
  };
  const of = (name: string) => queries.filter((q) => q.name === name);
  return { resolver, queries, of };
}

/** Answers at once from a table; a name not in it is NXDOMAIN. */
function tableResolver(table: Record<string, DnsAnswer>) {
  const calls: string[] = [];
  const resolver: Resolver = {
    resolve: async (name) => {
      calls.push(name);
      const answer = table[name];
      if (!answer)
        throw Object.assign(new Error(`queryA ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return answer;
    },
  };
  return { resolver, calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const wide = () => new LookupBound({ perClient: 100, total: 100 });

describe('DnsCache: answers and their lifetime', () => {
  test('an answer is kept for its TTL, clamped to 5 s .. 5 min', async () => {
    let now = 1_000_000;
    const { resolver, calls } = tableResolver({
      'short.example': { addresses: ['93.184.216.34'], ttlSeconds: 1 },
      'mid.example': { addresses: ['93.184.216.35'], ttlSeconds: 60 },
      'long.example': { addresses: ['93.184.216.36'], ttlSeconds: 86_400 },
      'hosts.example': { addresses: ['93.184.216.37'] },
    });
    const dns = new DnsCache({ resolver, clock: () => now });
    const bound = wide();
    const ask = (name: string) => dns.lookup(name, bound, 'user:1');
    const count = (name: string) => calls.filter((n) => n === name).length;
    for (const name of ['short.example', 'mid.example', 'long.example', 'hosts.example']) {
      await ask(name);
    }
    assert.deepEqual(await ask('short.example'), ['93.184.216.34']);

    now += BOUNDS.dns.minTtlMs - 1; // a 1 s TTL is held for 5 s
    await ask('short.example');
    assert.equal(count('short.example'), 1);
    now += 2;
    await ask('short.example');
    assert.equal(count('short.example'), 2);

    now += 60_000 - BOUNDS.dns.minTtlMs - 10; // the 60 s TTL as given
    await ask('mid.example');
    assert.equal(count('mid.example'), 1);
    now += 20;
    await ask('mid.example');
    assert.equal(count('mid.example'), 2);

    await ask('hosts.example'); // no TTL: 30 s, past by now
    assert.equal(count('hosts.example'), 2);

    now += BOUNDS.dns.maxTtlMs; // a day's TTL is held 5 minutes at most
    await ask('long.example');
    assert.equal(count('long.example'), 2);
  });

  test('failures (NXDOMAIN, SERVFAIL, timeout, no address) are cached 10 s', async () => {
    let now = 0;
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, clock: () => now, timeoutMs: 200 });
    const bound = wide();
    const ask = (name: string) => dns.lookup(name, bound, 'user:1');

    const nx = ask('nx.example');
    const servfail = ask('servfail.example');
    const empty = ask('empty.example');
    const dead = ask('dead.example');
    await tick();
    held.of('nx.example')[0]?.fail('ENOTFOUND');
    held.of('servfail.example')[0]?.fail('ESERVFAIL');
    held.of('empty.example')[0]?.answer({ addresses: [], ttlSeconds: 300 });
    await assert.rejects(nx, { code: 'ENOTFOUND' });
    await assert.rejects(servfail, { code: 'ESERVFAIL' });
    await assert.rejects(empty, /no address/);
    await assert.rejects(dead, DnsTimeoutError);
    // Give the query's own timeout (same length) the moment to record its failure.
    await new Promise((resolve) => setTimeout(resolve, 50));

    now += BOUNDS.dns.failureTtlMs - 1;
    for (const name of ['nx.example', 'servfail.example', 'empty.example', 'dead.example']) {
      await assert.rejects(ask(name));
      assert.equal(held.of(name).length, 1, `${name} asked again within 10 s`);
    }
    now += 2;
    const again = ask('nx.example');
    await tick();
    assert.equal(held.of('nx.example').length, 2);
    held.of('nx.example')[1]?.answer({ addresses: ['93.184.216.34'], ttlSeconds: 60 });
    assert.deepEqual(await again, ['93.184.216.34']);
  });

  test('concurrent lookups of one name share one query', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver });
    const bound = wide();
    const lookups = [
      dns.lookup('shared.example', bound, 'user:1'),
      dns.lookup('shared.example', bound, 'user:2'),
      dns.lookup('shared.example', bound, 'demo:192.0.2.1'),
      dns.lookup('shared.example', bound, 'user:1'),
    ];
    await tick();
    assert.equal(held.of('shared.example').length, 1);
    held.of('shared.example')[0]?.answer({ addresses: ['93.184.216.34', '::1'], ttlSeconds: 60 });
    for (const result of await Promise.all(lookups)) {
      assert.deepEqual(result, ['93.184.216.34', '::1']);
    }
    // And the failure of one query fails every lookup waiting on it.
    const failing = [
      dns.lookup('gone.example', bound, 'user:1'),
      dns.lookup('gone.example', bound, 'user:2'),
    ];
    await tick();
    assert.equal(held.of('gone.example').length, 1);
    held.of('gone.example')[0]?.fail('ENOTFOUND');
    for (const p of failing) await assert.rejects(p, { code: 'ENOTFOUND' });
  });

  test('a lookup waits at most the timeout; a dead name does not hold it longer', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 100 });
    const started = performance.now();
    await assert.rejects(dns.lookup('dead.example', wide(), 'user:1'), DnsTimeoutError);
    assert.ok(performance.now() - started < 5_000);
  });
});

describe('DnsCache: lookups in flight are bounded per client', () => {
  test("one client's slow names wait on its own bound, never another client's lookup", async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 60_000 });
    const bound = new LookupBound({ perClient: 4, total: 64 });
    const slow = Array.from({ length: 20 }, (_, i) =>
      dns.lookup(`slow${i}.example`, bound, 'user:1'),
    );
    for (const p of slow) p.catch(() => {});
    await tick();
    // Four of user:1's names are being asked; the other sixteen wait for user:1's slots.
    assert.equal(held.queries.length, 4);
    assert.equal(bound.running, 4);

    const other = dns.lookup('fast.example', bound, 'user:2');
    await tick();
    assert.equal(held.of('fast.example').length, 1, "user:2's lookup started at once");
    held.of('fast.example')[0]?.answer({ addresses: ['127.0.0.1'], ttlSeconds: 60 });
    assert.deepEqual(await other, ['127.0.0.1']);

    // A slot user:1 frees goes to user:1's next name.
    held.of('slow0.example')[0]?.answer({ addresses: ['93.184.216.34'], ttlSeconds: 60 });
    await slow[0];
    await tick();
    assert.equal(held.of('slow4.example').length, 1);
    assert.equal(bound.running, 4);
  });

  test("joining a query that waits for another client's slot takes a slot of one's own", async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 60_000 });
    const bound = new LookupBound({ perClient: 1, total: 10 });
    const blocker = dns.lookup('slow.example', bound, 'user:1');
    const queued = dns.lookup('popular.example', bound, 'user:1');
    await tick();
    assert.equal(held.of('popular.example').length, 0, "waiting for user:1's only slot");
    const other = dns.lookup('popular.example', bound, 'user:2');
    await tick();
    assert.equal(held.of('popular.example').length, 1, "started on user:2's slot");
    held.of('popular.example')[0]?.answer({ addresses: ['127.0.0.1'], ttlSeconds: 60 });
    assert.deepEqual(await other, ['127.0.0.1']);
    assert.deepEqual(await queued, ['127.0.0.1']);
    // The joined lookup is done: its own request for a slot is withdrawn, not left queued.
    assert.equal(bound.waiting, 0);
    held.of('slow.example')[0]?.fail('ESERVFAIL');
    await assert.rejects(blocker);
    await tick();
    assert.equal(bound.running, 0);
  });

  test('when the total bound is full, freed slots go to waiting clients in turn', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 60_000 });
    const bound = new LookupBound({ perClient: 4, total: 4 });
    const all: Promise<string[]>[] = [];
    for (let i = 0; i < 8; i++) all.push(dns.lookup(`a${i}.example`, bound, 'user:1'));
    all.push(dns.lookup('b0.example', bound, 'user:2'));
    for (const p of all) p.catch(() => {});
    await tick();
    assert.equal(held.queries.length, 4);
    held.of('a0.example')[0]?.answer({ addresses: ['93.184.216.34'], ttlSeconds: 60 });
    await all[0];
    await tick();
    assert.equal(held.of('b0.example').length, 1, 'user:2 goes before the rest of user:1');
    for (const q of held.queries) q.fail('ESERVFAIL');
  });

  test('a lookup given up while waiting for a slot leaves no trace in the bound', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 100 });
    const bound = new LookupBound({ perClient: 1, total: 1 });
    // The client's only slot is taken by other work for the whole test.
    const releaseOther = await bound.acquire('user:1', new AbortController().signal);
    await assert.rejects(dns.lookup('two.example', bound, 'user:1'), DnsTimeoutError);
    assert.equal(held.of('two.example').length, 0, 'never asked: it waited, then gave up');
    assert.equal(bound.running, 1);
    releaseOther();
    assert.equal(bound.running, 0);
    // The bound is whole again: the next lookup starts at once.
    const next = dns.lookup('three.example', bound, 'user:1');
    await tick();
    held.of('three.example')[0]?.answer({ addresses: ['93.184.216.34'], ttlSeconds: 60 });
    assert.deepEqual(await next, ['93.184.216.34']);
  });
});

describe('DnsCache: busy, not unresolvable', () => {
  test('a lookup that timed out only waiting for a slot is DnsBusyError', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 200 });
    const bound = new LookupBound({ perClient: 1, total: 10 });
    // The client's only slot is held by its other lookups for the whole test.
    const releaseOther = await bound.acquire('user:1', new AbortController().signal);
    await assert.rejects(dns.lookup('waits.example', bound, 'user:1'), DnsBusyError);
    releaseOther();
    // One that was asked and got no answer is a plain timeout.
    await assert.rejects(dns.lookup('slow.example', bound, 'user:1'), (err: unknown) => {
      assert.ok(err instanceof DnsTimeoutError && !(err instanceof DnsBusyError));
      return true;
    });
    assert.equal(held.of('waits.example').length, 0);
  });
});

describe('DnsCache: a query nobody waits for', () => {
  test('gives its slot back at once (it still fills the cache when it ends)', async () => {
    const held = heldResolver();
    const dns = new DnsCache({ resolver: held.resolver, timeoutMs: 400 });
    const bound = new LookupBound({ perClient: 1, total: 10 });
    const first = dns.lookup('dead1.example', bound, 'user:1');
    first.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Queued behind the first; started when the first's slot frees, 200 ms before it gives up.
    const second = dns.lookup('dead2.example', bound, 'user:1');
    await assert.rejects(first, DnsTimeoutError);
    await assert.rejects(second, DnsTimeoutError);
    assert.equal(held.of('dead2.example').length, 1);
    assert.equal(bound.running, 0, "the second query's slot is free though it still runs");
    const next = dns.lookup('next.example', bound, 'user:1');
    await tick();
    assert.equal(held.of('next.example').length, 1);
    held.of('next.example')[0]?.answer({ addresses: ['93.184.216.34'], ttlSeconds: 60 });
    assert.deepEqual(await next, ['93.184.216.34']);
    // The abandoned query's late answer is still kept.
    held.of('dead2.example')[0]?.answer({ addresses: ['93.184.216.35'], ttlSeconds: 60 });
    await tick();
    assert.deepEqual(await dns.lookup('dead2.example', bound, 'user:1'), ['93.184.216.35']);
  });
});
