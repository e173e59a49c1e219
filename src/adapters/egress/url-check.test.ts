import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../domain/errors.ts';
import type { EgressPolicy } from './policy.ts';
import { parseAllowlist } from './policy.ts';
import { checkTargetUrl, effectivePort, parseTargetUrl } from './url-check.ts';

/** A resolver that answers from a table and records every call; never touches DNS. */
function fakeResolver(table: Record<string, string[]>) {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<string[]> => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer)
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), {
        code: 'ENOTFOUND',
      });
    return answer;
  };
  return { resolve, calls };
}

function policy(overrides: Partial<EgressPolicy> = {}): EgressPolicy {
  return {
    allowlist: new Set(),
    selfPorts: [],
    // Fails loudly if a test ever reaches DNS unintentionally.
    resolve: async (name) => {
      throw new Error(`unexpected DNS lookup of ${name}`);
    },
    ...overrides,
  };
}

function isAppErrorWith(code: string, messagePart?: string) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof AppError, `expected AppError, got ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, /^url |^could not resolve host /);
    if (messagePart !== undefined) assert.ok(err.message.includes(messagePart), err.message);
    // A resolved address never appears (docs/egress.md, "What refusals say").
    if (err.message.includes(' resolves to ')) assert.doesNotMatch(err.message, /\d+\.\d+|::|\(/);
    return true;
  };
}

async function refused(p: EgressPolicy, raw: string, messagePart?: string): Promise<void> {
  const url = parseTargetUrl(raw);
  await assert.rejects(checkTargetUrl(p, url), isAppErrorWith('url_not_allowed', messagePart));
}

describe('parseTargetUrl', () => {
  test('accepts absolute http and https URLs', () => {
    assert.equal(parseTargetUrl('https://example.com/a?b=c').href, 'https://example.com/a?b=c');
    assert.equal(parseTargetUrl('http://example.com').href, 'http://example.com/');
    assert.equal(parseTargetUrl('HTTPS://EXAMPLE.COM:8443/').host, 'example.com:8443');
  });

  test('refuses every other scheme with url_not_allowed', () => {
    const urls = [
      'file:///etc/passwd',
      'file://localhost/etc/passwd',
      'chrome://settings',
      'chrome-extension://abc/x.html',
      'view-source:https://example.com',
      'data:text/html,<script>alert(1)</script>',
      'javascript:alert(1)',
      'ftp://example.com/x',
      'ws://example.com/socket',
      'wss://example.com/socket',
      'about:blank',
      'blob:https://example.com/uuid',
      'filesystem:https://example.com/temporary/x',
      'gopher://127.0.0.1:6379/_INFO',
      'dict://127.0.0.1:11211/stat',
      'mailto:a@example.com',
      'devtools://devtools/bundled/inspector.html',
      'localhost:3000',
    ];
    for (const raw of urls) {
      assert.throws(
        () => parseTargetUrl(raw),
        isAppErrorWith('url_not_allowed', 'url must use http or https'),
        raw,
      );
    }
  });

  test('refuses credentials', () => {
    for (const raw of [
      'http://user:pass@example.com/',
      'https://user@example.com/',
      'https://:pass@example.com/',
    ]) {
      assert.throws(
        () => parseTargetUrl(raw),
        isAppErrorWith('url_not_allowed', 'username or password'),
        raw,
      );
    }
  });

  test('limits the length to 2048 characters', () => {
    const base = 'https://example.com/';
    const exact = base + 'a'.repeat(2048 - base.length);
    assert.equal(parseTargetUrl(exact).href.length, 2048);
    assert.throws(
      () => parseTargetUrl(`${exact}a`),
      isAppErrorWith('invalid_request', 'at most 2048 characters'),
    );
  });

  test('refuses non-strings and non-URLs with invalid_request', () => {
    for (const raw of [
      undefined,
      null,
      42,
      true,
      {},
      ['https://example.com'],
      new URL('https://a.b'),
    ]) {
      assert.throws(() => parseTargetUrl(raw), isAppErrorWith('invalid_request', 'string'));
    }
    for (const raw of [
      '',
      '   ',
      'example.com',
      '//example.com/x',
      '/relative',
      'http://',
      'https://exa mple.com',
      'http://[::1/',
      'http://1.2.3.4.5/',
    ]) {
      assert.throws(() => parseTargetUrl(raw), isAppErrorWith('invalid_request'), raw);
    }
  });

  test('effective ports', () => {
    assert.equal(effectivePort(new URL('http://a.example/')), 80);
    assert.equal(effectivePort(new URL('https://a.example/')), 443);
    assert.equal(effectivePort(new URL('http://a.example:8080/')), 8080);
    assert.equal(effectivePort(new URL('https://a.example:443/')), 443);
  });
});

describe('checkTargetUrl refuses before any connection', () => {
  test('localhost names are loopback without DNS', async () => {
    await refused(policy(), 'http://localhost/', 'loopback');
    await refused(policy(), 'http://localhost:3000/', 'loopback');
    await refused(policy(), 'http://LOCALHOST./', 'loopback');
    await refused(policy(), 'http://foo.localhost/', 'loopback');
    await refused(policy(), 'https://a.b.localhost:8443/', 'loopback');
  });

  test('literal loopback, private, link-local and metadata addresses', async () => {
    await refused(policy(), 'http://[::1]/', 'url host ::1 is a loopback address');
    await refused(policy(), 'http://[::1]:8080/', 'loopback');
    await refused(policy(), 'http://127.0.0.1/', 'url host 127.0.0.1 is a loopback address');
    await refused(policy(), 'http://127.0.0.2:9000/', 'loopback');
    await refused(policy(), 'http://0.0.0.0/', 'unspecified');
    await refused(policy(), 'http://169.254.169.254/latest', 'cloud metadata');
    await refused(policy(), 'http://169.254.169.254/latest/meta-data/iam/', '169.254.169.254');
    await refused(policy(), 'http://[fd00:ec2::254]/latest', 'cloud metadata');
    await refused(policy(), 'http://100.100.100.200/latest', 'cloud metadata');
    await refused(policy(), 'http://10.0.0.1/', 'url host 10.0.0.1 is a private address');
    await refused(policy(), 'http://172.16.5.4/', 'private');
    await refused(policy(), 'http://192.168.1.1/', 'private');
    await refused(policy(), 'http://100.64.1.1/', 'carrier-grade NAT');
    await refused(policy(), 'http://[fe80::1]/', 'link-local');
    await refused(policy(), 'http://[fc00::1]/', 'unique local');
    await refused(policy(), 'http://224.0.0.1/', 'multicast');
    await refused(policy(), 'http://[ff02::1]/', 'multicast');
    await refused(policy(), 'http://255.255.255.255/', 'broadcast');
    await refused(policy(), 'http://240.0.0.1/', 'reserved');
  });

  test('decimal, hex, octal, short and mapped forms', async () => {
    for (const raw of [
      'http://2130706433/',
      'http://0x7f000001/',
      'http://0x7f.0.0.1/',
      'http://0x7f.1/',
      'http://0177.0.0.1/',
      'http://017700000001/',
      'http://127.1/',
      'http://127.0.1/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://[2002:7f00:1::]/',
      'http://[::127.0.0.1]/',
    ]) {
      await refused(policy(), raw, 'address');
    }
    await refused(policy(), 'http://0xa9fea9fe/', 'cloud metadata');
    await refused(policy(), 'http://2852039166/', 'cloud metadata');
    await refused(policy(), 'http://[::ffff:a9fe:a9fe]/', 'cloud metadata');
    await refused(policy(), 'http://012.1/', 'url host 10.0.0.1 is a private address');
  });

  test('a name the resolver maps to loopback or a private address', async () => {
    const r = fakeResolver({
      'evil.example': ['127.0.0.1'],
      'intranet.example': ['10.1.2.3'],
      'mapped.example': ['::ffff:10.1.2.3'],
      'zone.example': ['fe80::1%eth0'],
      'garbage.example': ['not-an-ip'],
    });
    const p = policy({ resolve: r.resolve });
    await refused(p, 'http://evil.example/', 'url host evil.example resolves to a loopback');
    await refused(
      p,
      'https://intranet.example/',
      'url host intranet.example resolves to a private address',
    );
    await refused(p, 'https://mapped.example/', 'private');
    await refused(p, 'https://zone.example/', 'link-local');
    await refused(p, 'https://garbage.example/', 'invalid address');
    assert.deepEqual(r.calls, [
      'evil.example',
      'intranet.example',
      'mapped.example',
      'zone.example',
      'garbage.example',
    ]);
  });

  test('a name resolving to one public and one private address is refused', async () => {
    const r = fakeResolver({
      'mixed.example': ['93.184.216.34', '10.0.0.5'],
      'mixed6.example': ['2606:4700::1111', '::1'],
    });
    const p = policy({ resolve: r.resolve });
    await refused(p, 'https://mixed.example/', 'mixed.example resolves to a private address');
    await refused(p, 'https://mixed6.example/', 'mixed6.example resolves to a loopback address');
  });

  test('a public name resolves once and returns the first address', async () => {
    const r = fakeResolver({ 'public.example': ['93.184.216.34', '2606:2800:220:1::1'] });
    const p = policy({ resolve: r.resolve });
    const dest = await checkTargetUrl(p, parseTargetUrl('https://public.example/x'));
    assert.deepEqual(dest, { address: '93.184.216.34', family: 4 });
    assert.deepEqual(r.calls, ['public.example']);
  });

  test('public literals pass without DNS (return value only, nothing connects)', async () => {
    assert.deepEqual(await checkTargetUrl(policy(), parseTargetUrl('https://8.8.8.8/')), {
      address: '8.8.8.8',
      family: 4,
    });
    assert.deepEqual(await checkTargetUrl(policy(), parseTargetUrl('http://134744072/')), {
      address: '8.8.8.8',
      family: 4,
    });
    assert.deepEqual(
      await checkTargetUrl(policy(), parseTargetUrl('https://[2606:4700:4700::1111]/')),
      { address: '2606:4700:4700::1111', family: 6 },
    );
  });

  test('a name that does not resolve is target_unreachable', async () => {
    const r = fakeResolver({});
    const p = policy({ resolve: r.resolve });
    await assert.rejects(
      checkTargetUrl(p, parseTargetUrl('https://nowhere.example/')),
      isAppErrorWith('target_unreachable', 'could not resolve host nowhere.example'),
    );
    const empty = policy({ resolve: async () => [] });
    await assert.rejects(
      checkTargetUrl(empty, parseTargetUrl('https://empty.example/')),
      isAppErrorWith('target_unreachable'),
    );
  });

  test('a redirect to another scheme is refused too', async () => {
    await assert.rejects(
      checkTargetUrl(policy(), new URL('file:///etc/passwd')),
      isAppErrorWith('url_not_allowed', 'http or https'),
    );
  });
});

describe('checkTargetUrl with an allowlist', () => {
  const PORT = 45678;

  test('lets 127.0.0.1:PORT through but not another port', async () => {
    const p = policy({ allowlist: parseAllowlist(`127.0.0.1:${PORT}`) });
    assert.deepEqual(await checkTargetUrl(p, parseTargetUrl(`http://127.0.0.1:${PORT}/`)), {
      address: '127.0.0.1',
      family: 4,
    });
    // Other encodings of the same address match the same entry.
    assert.deepEqual(await checkTargetUrl(p, parseTargetUrl(`http://0x7f.1:${PORT}/`)), {
      address: '127.0.0.1',
      family: 4,
    });
    assert.deepEqual(await checkTargetUrl(p, parseTargetUrl(`http://localhost:${PORT}/`)), {
      address: '127.0.0.1',
      family: 4,
    });
    await refused(p, `http://127.0.0.1:${PORT + 1}/`, 'loopback');
    await refused(p, 'http://127.0.0.1/', 'loopback');
    await refused(p, `http://127.0.0.2:${PORT}/`, 'loopback');
    await refused(p, `http://[::1]:${PORT}/`, 'loopback');
  });

  test('a name entry lets that name through to a private address', async () => {
    const r = fakeResolver({ 'intranet.example': ['10.1.2.3'], 'other.example': ['10.1.2.3'] });
    const p = policy({ allowlist: parseAllowlist('Intranet.Example:443'), resolve: r.resolve });
    assert.deepEqual(await checkTargetUrl(p, parseTargetUrl('https://intranet.example/')), {
      address: '10.1.2.3',
      family: 4,
    });
    await refused(p, 'http://intranet.example/', 'private');
    await refused(p, 'https://other.example/', 'private');
  });

  test('an IPv6 entry', async () => {
    const p = policy({ allowlist: parseAllowlist(`[::1]:${PORT}`) });
    assert.deepEqual(await checkTargetUrl(p, parseTargetUrl(`http://[::1]:${PORT}/`)), {
      address: '::1',
      family: 6,
    });
    await refused(p, `http://127.0.0.1:${PORT}/`, 'loopback');
  });

  test('the service itself is refused even when allowlisted', async () => {
    const r = fakeResolver({ 'self.example': ['127.0.0.1'] });
    const p = policy({
      allowlist: parseAllowlist(`127.0.0.1:${PORT},localhost:${PORT},[::1]:${PORT}`),
      selfPorts: [PORT],
      resolve: r.resolve,
    });
    // The same text as any loopback refusal: a port scan cannot tell this service's ports.
    await refused(p, `http://127.0.0.1:${PORT}/`, 'url host 127.0.0.1 is a loopback address');
    await refused(
      p,
      `http://localhost:${PORT}/`,
      'url host localhost resolves to a loopback address',
    );
    await refused(p, `http://[::1]:${PORT}/`, 'url host ::1 is a loopback address');
    await refused(p, `http://0.0.0.0:${PORT}/`, 'url host 0.0.0.0 is an unspecified address');
    await refused(p, `http://[::ffff:127.0.0.1]:${PORT}/`, 'is a loopback address');
    await refused(p, `http://self.example:${PORT}/`, 'self.example resolves to a loopback address');
    await refused(p, `http://127.3.4.5:${PORT}/`, 'url host 127.3.4.5 is a loopback address');
    for (const raw of [`http://127.0.0.1:${PORT}/`, `http://self.example:${PORT}/`]) {
      await assert.rejects(checkTargetUrl(p, parseTargetUrl(raw)), (err: unknown) => {
        assert.doesNotMatch((err as Error).message, /service/);
        return true;
      });
    }
  });
});
