import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientIpKey } from './client-ip.ts';

test('IPv4 clients count per address, IPv6 clients per /64', () => {
  assert.equal(clientIpKey('198.51.100.7'), '198.51.100.7');
  assert.equal(clientIpKey('::ffff:198.51.100.7'), '198.51.100.7');
  assert.equal(clientIpKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(clientIpKey('2001:0db8:0001:0002:ffff:0:0:9'), '2001:db8:1:2::/64');
  assert.equal(clientIpKey('2001:db8::1'), '2001:db8:0:0::/64');
  assert.notEqual(clientIpKey('2001:db8:1:3::1'), clientIpKey('2001:db8:1:2::1'));
  assert.equal(clientIpKey('::1'), '0:0:0:0::/64');
});
