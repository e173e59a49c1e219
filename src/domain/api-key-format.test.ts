import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateApiKey, hashApiKey, isWellFormedApiKey } from './api-key-format.ts';

test('generated keys are well formed, unique, and hashed with SHA-256', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const { key, prefix, hash } = generateApiKey();
    assert.match(key, /^sk_live_[0-9A-Za-z]{38}$/);
    assert.ok(isWellFormedApiKey(key));
    assert.equal(prefix, key.slice(0, 12));
    assert.equal(hash, hashApiKey(key));
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.ok(!seen.has(key));
    seen.add(key);
  }
});

test('a changed character, wrong prefix or wrong length fails the checksum', () => {
  const { key } = generateApiKey();
  const flipped = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
  assert.equal(isWellFormedApiKey(flipped), false);
  assert.equal(isWellFormedApiKey(key.replace('sk_live_', 'sk_test_')), false);
  assert.equal(isWellFormedApiKey(key.slice(0, -1)), false);
  assert.equal(isWellFormedApiKey(`${key}x`), false);
  assert.equal(isWellFormedApiKey(''), false);
});
