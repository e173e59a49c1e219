import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  canonicalIp,
  classifyAddress,
  embeddedIpv4,
  isValidHostName,
  parseHostLiteral,
  unmapIp,
} from './address.ts';

/** [address, expected category] — every one refused. */
const REFUSED_V4: ReadonlyArray<readonly [string, string]> = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'this-network'],
  ['0.255.255.255', 'this-network'],
  ['10.0.0.0', 'private'],
  ['10.0.0.5', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.0', 'carrier-grade-nat'],
  ['100.127.255.255', 'carrier-grade-nat'],
  ['100.100.100.200', 'cloud-metadata'],
  ['127.0.0.1', 'loopback'],
  ['127.0.0.2', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'cloud-metadata'],
  ['169.254.170.2', 'link-local'],
  ['168.63.129.16', 'cloud-metadata'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.1', 'ietf-protocol'],
  ['192.0.0.9', 'ietf-protocol'],
  ['192.0.0.170', 'ietf-protocol'],
  ['192.0.0.192', 'cloud-metadata'],
  ['192.0.2.1', 'documentation'],
  ['192.88.99.1', '6to4-relay'],
  ['192.168.0.1', 'private'],
  ['192.168.255.255', 'private'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['254.1.2.3', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
];

const ALLOWED_V4: readonly string[] = [
  '1.1.1.1',
  '8.8.8.8',
  '9.255.255.255',
  '11.0.0.0',
  '100.63.255.255',
  '100.128.0.0',
  '126.255.255.255',
  '128.0.0.1',
  '169.253.255.255',
  '169.255.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.0.1.1',
  '192.0.3.1',
  '192.31.196.1',
  '192.88.98.1',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '198.51.101.1',
  '203.0.114.1',
  '223.255.255.255',
];

const REFUSED_V6: ReadonlyArray<readonly [string, string]> = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.0.0.1', 'private'],
  ['::ffff:169.254.169.254', 'cloud-metadata'],
  ['::ffff:a9fe:a9fe', 'cloud-metadata'],
  ['::ffff:0.0.0.0', 'unspecified'],
  ['::127.0.0.1', 'ipv4-compatible'],
  ['::8.8.8.8', 'ipv4-compatible'],
  ['::7f00:1', 'ipv4-compatible'],
  ['64:ff9b::127.0.0.1', 'loopback'],
  ['64:ff9b::a00:1', 'private'],
  ['64:ff9b::a9fe:a9fe', 'cloud-metadata'],
  ['64:ff9b:1::1', 'nat64-local'],
  ['64:ff9b:1::8.8.8.8', 'nat64-local'],
  ['100::1', 'discard'],
  ['100::ffff:ffff:ffff:ffff', 'discard'],
  ['100:0:0:1::1', 'dummy'],
  ['2001::1', 'teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
  ['2001:1::1', 'ietf-protocol'],
  ['2001:2::1', 'benchmarking'],
  ['2001:3::1', 'ietf-protocol'],
  ['2001:4:112::1', 'ietf-protocol'],
  ['2001:10::1', 'ietf-protocol'],
  ['2001:20::1', 'ietf-protocol'],
  ['2001:1ff:ffff::1', 'ietf-protocol'],
  ['2001:db8::1', 'documentation'],
  ['2001:db8:ffff:ffff::1', 'documentation'],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:a00:1::', 'private'],
  ['2002:a9fe:a9fe::1', 'cloud-metadata'],
  ['2002:c0a8:101::1', 'private'],
  ['3fff::1', 'documentation'],
  ['3fff:fff:ffff::1', 'documentation'],
  ['5f00::1', 'srv6'],
  ['5f00:ffff::1', 'srv6'],
  ['fc00::1', 'unique-local'],
  ['fd00::2', 'unique-local'],
  ['fdff:ffff::1', 'unique-local'],
  ['fd00:ec2::254', 'cloud-metadata'],
  ['fd00:ec2::253', 'unique-local'],
  ['fe80::1', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'site-local'],
  ['feff::1', 'site-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['::2:3:4:5:6', 'reserved'],
  ['1::', 'reserved'],
  ['4000::1', 'reserved'],
  ['e000::1', 'reserved'],
  ['::ffff:0:127.0.0.1', 'reserved'],
];

const ALLOWED_V6: readonly string[] = [
  '2606:4700:4700::1111',
  '2001:4860:4860::8888',
  '2001:200::1',
  '2001:db7:ffff::1',
  '2001:db9::1',
  '2003::1',
  '2620:4f:8000::1',
  '3ffe::1',
  '3fff:1000::1',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1',
  '2a00:1450:4001:81a::200e',
];

describe('classifyAddress: IPv4 special-purpose registry', () => {
  for (const [ip, category] of REFUSED_V4) {
    test(`${ip} is refused as ${category}`, () => {
      assert.deepEqual(classifyAddress(ip), { allowed: false, category });
    });
  }
  for (const ip of ALLOWED_V4) {
    test(`${ip} is public`, () => {
      assert.deepEqual(classifyAddress(ip), { allowed: true, category: 'public' });
    });
  }
});

describe('classifyAddress: IPv6 special-purpose registry', () => {
  for (const [ip, category] of REFUSED_V6) {
    test(`${ip} is refused as ${category}`, () => {
      assert.deepEqual(classifyAddress(ip), { allowed: false, category });
    });
  }
  for (const ip of ALLOWED_V6) {
    test(`${ip} is public`, () => {
      assert.deepEqual(classifyAddress(ip), { allowed: true, category: 'public' });
    });
  }
});

describe('classifyAddress: input forms', () => {
  test('zone ids, brackets and uppercase', () => {
    assert.deepEqual(classifyAddress('fe80::1%eth0'), { allowed: false, category: 'link-local' });
    assert.deepEqual(classifyAddress('[fe80::1%25eth0]'), {
      allowed: false,
      category: 'link-local',
    });
    assert.deepEqual(classifyAddress('[::1]'), { allowed: false, category: 'loopback' });
    assert.deepEqual(classifyAddress('FE80::ABCD'), { allowed: false, category: 'link-local' });
    assert.deepEqual(classifyAddress('[FD00:EC2::254]'), {
      allowed: false,
      category: 'cloud-metadata',
    });
    assert.deepEqual(classifyAddress('::FFFF:7F00:1'), { allowed: false, category: 'loopback' });
    assert.deepEqual(classifyAddress('[2606:4700::1]'), { allowed: true, category: 'public' });
  });

  test('fully written and compressed forms agree', () => {
    assert.equal(classifyAddress('0000:0000:0000:0000:0000:ffff:7f00:0001').category, 'loopback');
    assert.equal(classifyAddress('0:0:0:0:0:ffff:127.0.0.1').category, 'loopback');
    assert.equal(classifyAddress('fe80:0000::0001').category, 'link-local');
  });

  test('things that are not a literal address are refused as invalid', () => {
    for (const bad of ['', 'localhost', 'example.com', '127.1', '0x7f000001', '1.2.3.4.5', ':::']) {
      assert.deepEqual(classifyAddress(bad), { allowed: false, category: 'invalid' }, bad);
    }
  });
});

describe('canonicalIp and unmapIp', () => {
  test('canonical text', () => {
    assert.equal(canonicalIp('[FE80::0001%eth0]'), 'fe80::1');
    assert.equal(canonicalIp('2001:DB8:0:0:1:0:0:1'), '2001:db8::1:0:0:1');
    assert.equal(canonicalIp('::ffff:127.0.0.1'), '::ffff:7f00:1');
    assert.equal(canonicalIp('1:0:0:0:0:0:0:0'), '1::');
    assert.equal(canonicalIp('1:2:3:4:5:6:7:8'), '1:2:3:4:5:6:7:8');
    assert.equal(canonicalIp('1:0:2:3:4:5:6:7'), '1:0:2:3:4:5:6:7');
    assert.equal(canonicalIp('10.0.0.1'), '10.0.0.1');
    assert.equal(canonicalIp('nope'), null);
  });
  test('unmapIp extracts IPv4 from ::ffff:0:0/96 only', () => {
    assert.equal(unmapIp('::ffff:7f00:1'), '127.0.0.1');
    assert.equal(unmapIp('[::FFFF:10.1.2.3]'), '10.1.2.3');
    assert.equal(unmapIp('64:ff9b::7f00:1'), '64:ff9b::7f00:1');
    assert.equal(unmapIp('8.8.8.8'), '8.8.8.8');
  });
});

/** [host as written, canonical IP]. */
const LITERALS: ReadonlyArray<readonly [string, string]> = [
  ['127.0.0.1', '127.0.0.1'],
  ['2130706433', '127.0.0.1'],
  ['0x7f000001', '127.0.0.1'],
  ['0X7F000001', '127.0.0.1'],
  ['0x7f.0.0.1', '127.0.0.1'],
  ['0x7f.0x0.0x0.0x1', '127.0.0.1'],
  ['0177.0.0.1', '127.0.0.1'],
  ['0177.0000.0000.0001', '127.0.0.1'],
  ['017700000001', '127.0.0.1'],
  ['127.1', '127.0.0.1'],
  ['127.0.1', '127.0.0.1'],
  ['0x7f.1', '127.0.0.1'],
  ['0177.1', '127.0.0.1'],
  ['0x7f.0.1', '127.0.0.1'],
  ['127.0x0.01', '127.0.0.1'],
  ['127.0.0.1.', '127.0.0.1'],
  ['0', '0.0.0.0'],
  ['0x', '0.0.0.0'],
  ['0.0.0.0', '0.0.0.0'],
  ['10.1', '10.0.0.1'],
  ['167772161', '10.0.0.1'],
  ['012.0.0.1', '10.0.0.1'],
  ['0xa9fea9fe', '169.254.169.254'],
  ['2852039166', '169.254.169.254'],
  ['0251.0376.0251.0376', '169.254.169.254'],
  ['169.254.43518', '169.254.169.254'],
  ['169.16689662', '169.254.169.254'],
  ['4294967295', '255.255.255.255'],
  ['0xffffffff', '255.255.255.255'],
  ['037777777777', '255.255.255.255'],
  ['255.255.65535', '255.255.255.255'],
  ['10.16777215', '10.255.255.255'],
  ['%31%32%37.0.0.1', '127.0.0.1'],
  ['\uff11\uff12\uff17\u3002\uff10\u3002\uff10\u3002\uff11', '127.0.0.1'],
  ['8.8.8.8', '8.8.8.8'],
  ['134744072', '8.8.8.8'],
  ['[::1]', '::1'],
  ['::1', '::1'],
  ['[0:0:0:0:0:0:0:1]', '::1'],
  ['[::ffff:127.0.0.1]', '::ffff:7f00:1'],
  ['[::ffff:7f00:1]', '::ffff:7f00:1'],
  ['[::FFFF:7F00:1]', '::ffff:7f00:1'],
  ['[64:ff9b::127.0.0.1]', '64:ff9b::7f00:1'],
  ['[::127.0.0.1]', '::7f00:1'],
  ['[fe80::1%eth0]', 'fe80::1'],
  ['[fe80::1%25eth0]', 'fe80::1'],
  ['fe80::1%eth0', 'fe80::1'],
  ['[2606:4700::1111]', '2606:4700::1111'],
];

const NAMES: readonly string[] = [
  'example.com',
  'localhost',
  'foo.localhost',
  '1.2.3.4.5',
  '256.0.0.1',
  '4294967296',
  '0x100000000',
  // Too large for the bytes they fill, however large: past 2^53 the parser's numbers round,
  // and past about 10^308 they are Infinity; both stay too large.
  '1.16777216',
  '0.0.0.256',
  '9007199254740993',
  '18446744073709551617',
  `0x${'f'.repeat(40)}`,
  `1${'0'.repeat(400)}`,
  `1.${'7'.repeat(400)}`,
  '08.0.0.1',
  '0xg.0.0.1',
  '1..1',
  '.1.2.3',
  '[example.com]',
  '[::1',
  '::1]',
  '[1.2.3.4]',
  ':::',
  '',
  '1e3',
];

describe('embeddedIpv4', () => {
  test('reads the IPv4 address out of the forms the classifier reads it from', () => {
    assert.equal(embeddedIpv4('::ffff:1.2.3.7'), '1.2.3.7');
    assert.equal(embeddedIpv4('::ffff:102:307'), '1.2.3.7');
    assert.equal(embeddedIpv4('64:ff9b::1.2.3.7'), '1.2.3.7');
    assert.equal(embeddedIpv4('64:ff9b::102:307'), '1.2.3.7');
    assert.equal(embeddedIpv4('2002:102:307::1'), '1.2.3.7');
    assert.equal(embeddedIpv4('2002:102:307:abcd::5'), '1.2.3.7');
  });

  test('null for IPv4 and other IPv6 addresses', () => {
    for (const ip of ['1.2.3.7', '::1', '2a01:4f8::7', '64:ff9b:1::102:307', 'fe80::1', 'x']) {
      assert.equal(embeddedIpv4(ip), null, ip);
    }
  });
});

describe('parseHostLiteral', () => {
  for (const [host, ip] of LITERALS) {
    test(`${JSON.stringify(host)} is ${ip}`, () => {
      assert.equal(parseHostLiteral(host), ip);
    });
  }
  for (const host of NAMES) {
    test(`${JSON.stringify(host)} is not a literal`, () => {
      assert.equal(parseHostLiteral(host), null);
    });
  }

  test('every literal form of loopback and metadata classifies as refused', () => {
    for (const [host, ip] of LITERALS) {
      const verdict = classifyAddress(parseHostLiteral(host) ?? 'x');
      assert.equal(verdict.allowed, ip === '8.8.8.8' || ip === '2606:4700::1111', host);
    }
  });
});

describe('parseHostLiteral behind WHATWG URL parsing', () => {
  const cases: ReadonlyArray<readonly [string, string, string]> = [
    // [url, expected hostname from new URL, canonical ip]
    ['http://0x7f.1/', '127.0.0.1', '127.0.0.1'],
    ['http://2130706433/', '127.0.0.1', '127.0.0.1'],
    ['http://0x7f000001:8080/x', '127.0.0.1', '127.0.0.1'],
    ['http://0177.0.0.1/', '127.0.0.1', '127.0.0.1'],
    ['http://017700000001/', '127.0.0.1', '127.0.0.1'],
    ['http://127.1/', '127.0.0.1', '127.0.0.1'],
    ['http://127.0.1/', '127.0.0.1', '127.0.0.1'],
    ['http://127.0.0.1./', '127.0.0.1', '127.0.0.1'],
    ['http://%31%32%37.0.0.1/', '127.0.0.1', '127.0.0.1'],
    ['http://\uff11\uff12\uff17.0.0.1/', '127.0.0.1', '127.0.0.1'],
    ['http://0xA9.254.169.254/latest/meta-data/', '169.254.169.254', '169.254.169.254'],
    ['http://[::1]:3000/', '[::1]', '::1'],
    ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['http://[::ffff:7f00:1]/', '[::ffff:7f00:1]', '::ffff:7f00:1'],
    ['http://[0:0:0:0:0:ffff:a9fe:a9fe]/', '[::ffff:a9fe:a9fe]', '::ffff:a9fe:a9fe'],
    ['https://[FD00:EC2::254]/', '[fd00:ec2::254]', 'fd00:ec2::254'],
  ];
  for (const [raw, hostname, ip] of cases) {
    test(raw, () => {
      const url = new URL(raw);
      assert.equal(url.hostname, hostname);
      assert.equal(parseHostLiteral(url.hostname), ip);
      assert.equal(classifyAddress(ip).allowed, false);
    });
  }

  test('a public name stays a name', () => {
    assert.equal(parseHostLiteral(new URL('https://example.com/').hostname), null);
  });
});

describe('isValidHostName', () => {
  test('names', () => {
    for (const ok of ['example.com', 'a', 'x_y.example', 'xn--bcher-kva.example', 'Example.COM.']) {
      assert.equal(isValidHostName(ok), true, ok);
    }
    for (const bad of ['', '.', 'a..b', 'foo.0x7f', '1.2.3.4.5', 'exa mple.com', 'a/b', 'a@b']) {
      assert.equal(isValidHostName(bad), false, bad);
    }
    assert.equal(isValidHostName(`${'a'.repeat(64)}.com`), false);
    // A last label that is a number of any size is a malformed address, not a name.
    assert.equal(isValidHostName(`a.0x${'f'.repeat(40)}`), false);
    assert.equal(isValidHostName(`a.${'9'.repeat(400)}`), false);
    assert.equal(isValidHostName(`${'a.'.repeat(130)}com`), false);
  });
});
