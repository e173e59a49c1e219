import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, test } from 'node:test';
import { AppError } from '../../domain/errors.ts';
import { DnsCache, LookupBound } from './dns-cache.ts';
import type { EgressPolicy } from './policy.ts';
import {
  addressSet,
  checkDestination,
  isAllowlisted,
  isSelf,
  parseAllowlist,
  systemInterfaceAddresses,
} from './policy.ts';

function policy(overrides: Partial<EgressPolicy> = {}): EgressPolicy {
  return {
    allowlist: new Set(),
    selfPorts: [],
    resolve: async (name) => {
      throw new Error(`unexpected DNS lookup of ${name}`);
    },
    ...overrides,
  };
}

const notAllowed = (part: string) => (err: unknown) => {
  assert.ok(err instanceof AppError);
  assert.equal(err.code, 'url_not_allowed');
  assert.ok(err.message.startsWith('url '), err.message);
  assert.ok(err.message.includes(part), err.message);
  return true;
};

describe('parseAllowlist', () => {
  test('parses, lowercases and canonicalises entries', () => {
    assert.deepEqual(
      [
        ...parseAllowlist(
          ' Intranet.Example:8080 , 127.0.0.1:3000,,[::1]:8080,127.1:80, [0:0::1]:81 ,x.:1',
        ),
      ],
      ['intranet.example:8080', '127.0.0.1:3000', '[::1]:8080', '127.0.0.1:80', '[::1]:81', 'x:1'],
    );
    assert.equal(parseAllowlist('').size, 0);
    assert.equal(parseAllowlist(' , ').size, 0);
  });

  test('a malformed entry throws an Error naming it', () => {
    const cases = [
      'intranet.example',
      'intranet.example:',
      'intranet.example:0',
      'intranet.example:65536',
      'intranet.example:80x',
      'intranet.example:-1',
      ':80',
      '::1:8080',
      '[::1]8080',
      '[::1:8080',
      '[example.com]:80',
      'bad host:80',
      'http://x.example:80',
      'foo.0x7f:80',
    ];
    for (const entry of cases) {
      assert.throws(
        () => parseAllowlist(`ok.example:80,${entry}`),
        (err: unknown) => {
          assert.ok(err instanceof Error);
          assert.ok(err.message.includes(`"${entry}"`), err.message);
          return true;
        },
        entry,
      );
    }
  });
});

describe('isAllowlisted', () => {
  const p = policy({
    allowlist: parseAllowlist('intranet.example:443,10.0.0.5:80,[fd00::7]:8080'),
  });

  test('matches the host name or the address, with the port', () => {
    assert.equal(isAllowlisted(p, 'intranet.example', '10.9.9.9', 443), true);
    assert.equal(isAllowlisted(p, 'INTRANET.EXAMPLE.', '10.9.9.9', 443), true);
    assert.equal(isAllowlisted(p, 'intranet.example', '10.9.9.9', 80), false);
    assert.equal(isAllowlisted(p, 'other.example', '10.0.0.5', 80), true);
    assert.equal(isAllowlisted(p, 'other.example', '::ffff:10.0.0.5', 80), true);
    assert.equal(isAllowlisted(p, '0xa.5', '10.0.0.5', 80), true);
    assert.equal(isAllowlisted(p, 'other.example', '10.0.0.5', 81), false);
    assert.equal(isAllowlisted(p, '[fd00::7]', 'fd00::7', 8080), true);
    assert.equal(isAllowlisted(p, 'v6.example', 'FD00:0::7', 8080), true);
    assert.equal(isAllowlisted(p, 'v6.example', 'fd00::8', 8080), false);
  });
});

describe('isSelf', () => {
  const p = policy({ selfPorts: [3000, 3001] });

  test('own ports on loopback and unspecified addresses', () => {
    for (const address of ['127.0.0.1', '127.9.9.9', '::1', '0.0.0.0', '::', '::ffff:127.0.0.1']) {
      assert.equal(isSelf(p, address, 3000), true, address);
      assert.equal(isSelf(p, address, 3001), true, address);
      assert.equal(isSelf(p, address, 3002), false, address);
    }
    assert.equal(isSelf(p, '8.8.8.8', 3000), false);
    assert.equal(isSelf(policy(), '127.0.0.1', 3000), false);
  });

  test('own ports on every local interface address', () => {
    const local = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .map((info) => info.address);
    assert.ok(local.length > 0);
    for (const address of local) assert.equal(isSelf(p, address, 3000), true, address);
  });
});

describe('checkDestination', () => {
  test('refuses bad ports and host names without DNS', async () => {
    for (const port of [0, -1, 65536, 1.5, Number.NaN]) {
      await assert.rejects(checkDestination(policy(), '8.8.8.8', port), notAllowed('port'));
    }
    for (const host of ['', 'a b', 'foo.0x7f', '1.2.3.4.5', '[example.com]', 'a/b', 'x..y']) {
      await assert.rejects(checkDestination(policy(), host, 80), notAllowed('not a valid host'));
    }
  });

  test('passes an AppError from the resolver through', async () => {
    const p = policy({
      resolve: async () => {
        throw new AppError('target_unreachable', 'could not resolve host x.example');
      },
    });
    await assert.rejects(checkDestination(p, 'x.example', 80), { code: 'target_unreachable' });
  });

  test('returns the first address and its family', async () => {
    const p = policy({ resolve: async () => ['2606:4700::1111', '1.1.1.1'] });
    assert.deepEqual(await checkDestination(p, 'v6.example', 443), {
      address: '2606:4700::1111',
      family: 6,
    });
  });

  test('localhost is loopback without DNS; allowlisted localhost is 127.0.0.1', async () => {
    await assert.rejects(checkDestination(policy(), 'localhost', 80), notAllowed('loopback'));
    const p = policy({ allowlist: parseAllowlist('localhost:8080') });
    assert.deepEqual(await checkDestination(p, 'localhost', 8080), {
      address: '127.0.0.1',
      family: 4,
    });
    assert.deepEqual(await checkDestination(p, 'localhost.', 8080), {
      address: '127.0.0.1',
      family: 4,
    });
  });

  test('.invalid names do not resolve, without asking DNS', async () => {
    const asked: string[] = [];
    const p = policy({
      resolve: async (name) => {
        asked.push(name);
        return ['1.1.1.1'];
      },
    });
    for (const host of ['document.invalid', 'DOCUMENT.INVALID.', 'invalid', 'a.b.invalid']) {
      await assert.rejects(checkDestination(p, host, 443), { code: 'target_unreachable' });
    }
    assert.deepEqual(asked, []);
    assert.deepEqual(await checkDestination(p, 'invalid.example', 443), {
      address: '1.1.1.1',
      family: 4,
    });
  });
});

/**
 * docs/egress.md, "Refused destinations": the host's own addresses. Pure-function checks: nothing here
 * connects anywhere, and the public-looking interface address is injected.
 */
describe('lookup bound', () => {
  test('a lookup that found no slot in time is 503 overloaded, not unresolvable', async () => {
    const dns = new DnsCache({
      resolver: { resolve: () => new Promise(() => {}) },
      timeoutMs: 200,
    });
    const bound = new LookupBound({ perClient: 1, total: 10 });
    const p = policy({ resolve: (name, client) => dns.lookup(name, bound, client) });
    const releaseOther = await bound.acquire('user:1', new AbortController().signal);
    await assert.rejects(checkDestination(p, 'next.example', 443, 'user:1'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'overloaded');
      assert.match(err.headers?.['Retry-After'] ?? '', /^[1-9]\d*$/);
      return true;
    });
    releaseOther();
    const first = checkDestination(p, 'dead.example', 443, 'user:1');
    // The name that was asked and never answered is still "could not resolve".
    await assert.rejects(first, (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'target_unreachable');
      return true;
    });
  });
});

describe("the host's own interface addresses", () => {
  const OWN = '1.2.3.7';
  const own = () => addressSet(['127.0.0.1', '::1', OWN, '2a01:4f8::7', 'fe80::1']);
  const names: Record<string, string[]> = {
    'www.example': [OWN],
    'dual.example': ['1.2.3.8', '2a01:4f8::7'],
    'other.example': ['1.2.3.8'],
  };
  const withOwn = (overrides: Partial<EgressPolicy> = {}) =>
    policy({
      localAddresses: own,
      resolve: async (name) => names[name] ?? [],
      ...overrides,
    });

  test('are refused on every port, literal or resolved, as non-public', async () => {
    const p = withOwn();
    for (const port of [80, 443, 22, 5432, 6379, 65535]) {
      await assert.rejects(
        checkDestination(p, OWN, port),
        notAllowed(`url host ${OWN} is a non-public address`),
      );
    }
    await assert.rejects(checkDestination(p, `::ffff:${OWN}`, 80), notAllowed('non-public'));
    await assert.rejects(checkDestination(p, '[2a01:4f8::7]', 443), notAllowed('non-public'));
    // Encoded forms of the own IPv4 address are the own address too.
    for (const encoded of [`64:ff9b::${OWN}`, '2002:102:307::1', `::ffff:${OWN}`]) {
      await assert.rejects(checkDestination(p, encoded, 443), notAllowed('non-public'));
    }
    for (const name of ['www.example', 'dual.example']) {
      await assert.rejects(checkDestination(p, name, 443), (err: unknown) => {
        notAllowed(`url host ${name} resolves to a non-public address`)(err);
        assert.doesNotMatch((err as Error).message, /1\.2\.3|2a01|loopback/);
        return true;
      });
    }
    // Another public address is still a public address.
    assert.deepEqual(await checkDestination(p, 'other.example', 443), {
      address: '1.2.3.8',
      family: 4,
    });
  });

  test('EGRESS_ALLOWLIST host:port lets one through on that port only', async () => {
    const p = withOwn({ allowlist: parseAllowlist(`${OWN}:8443,www.example:443`) });
    assert.deepEqual(await checkDestination(p, OWN, 8443), { address: OWN, family: 4 });
    await assert.rejects(checkDestination(p, OWN, 8444), notAllowed('non-public'));
    assert.deepEqual(await checkDestination(p, 'www.example', 443), { address: OWN, family: 4 });
    await assert.rejects(checkDestination(p, 'www.example', 80), notAllowed('non-public'));
    // ... but never the service's own port, and the text does not say it is the service.
    const self = withOwn({ allowlist: parseAllowlist(`${OWN}:3000`), selfPorts: [3000] });
    await assert.rejects(
      checkDestination(self, OWN, 3000),
      notAllowed(`url host ${OWN} is a non-public address`),
    );
  });

  test('an own address in a refused range says that range', async () => {
    const p = withOwn();
    await assert.rejects(
      checkDestination(p, 'fe80::1', 443),
      notAllowed('url host fe80::1 is a link-local address'),
    );
    await assert.rejects(
      checkDestination(p, '127.0.0.1', 443),
      notAllowed('url host 127.0.0.1 is a loopback address'),
    );
  });

  test('by default the list is read from os.networkInterfaces()', () => {
    const listed = Object.values(networkInterfaces())
      .flatMap((list) => list ?? [])
      .map((info) => info.address);
    assert.deepEqual(systemInterfaceAddresses(), addressSet(listed));
  });
});
