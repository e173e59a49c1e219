import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createSecretDeriver } from '../../lib/server-secret.ts';
import { isAppError } from '../errors.ts';
import { openCredentials, sealCredentials } from './job-credentials.ts';

const secrets = createSecretDeriver('one server secret, long enough to use');
const input = {
  url: 'https://example.com/',
  width: 800,
  headers: { 'X-Token': 'token-value' },
  cookies: [{ name: 'session', value: 'cookie-value' }],
  http_auth: { username: 'alice', password: 'password-value' },
};

test('credentials are sealed in the row and come back for the render; the rest stays readable', () => {
  const stored = sealCredentials(secrets, 'job_1', input);
  const text = JSON.stringify(stored);
  for (const secret of ['token-value', 'cookie-value', 'password-value', 'alice']) {
    assert.ok(!text.includes(secret), secret);
  }
  assert.deepEqual(Object.keys(stored), ['url', 'width', 'sealed_credentials']);
  assert.match(String(stored.sealed_credentials), /^v1\.[A-Za-z0-9_-]+$/);
  assert.deepEqual(openCredentials(secrets, 'job_1', stored), input);
  // Two seals of the same input differ (a fresh IV each time).
  assert.notEqual(
    sealCredentials(secrets, 'job_1', input).sealed_credentials,
    stored.sealed_credentials,
  );
});

test('a request without credentials is stored as it is', () => {
  const plain = { url: 'https://example.com/', width: 800 };
  assert.deepEqual(sealCredentials(secrets, 'job_1', plain), plain);
  assert.deepEqual(openCredentials(secrets, 'job_1', plain), plain);
});

test('another job, another server secret, or an altered ciphertext opens nothing', () => {
  const stored = sealCredentials(secrets, 'job_1', input);
  const sealed = String(stored.sealed_credentials);
  // Change one character inside the ciphertext (not the last, whose low bits may be padding).
  const at = sealed.length - 2;
  const altered = `${sealed.slice(0, at)}${sealed[at] === 'A' ? 'B' : 'A'}${sealed.slice(at + 1)}`;
  assert.notEqual(altered, sealed);
  const cases = [
    () => openCredentials(secrets, 'job_2', stored),
    () =>
      openCredentials(createSecretDeriver('another server secret, long enough'), 'job_1', stored),
    () => openCredentials(secrets, 'job_1', { ...stored, sealed_credentials: altered }),
    () => openCredentials(secrets, 'job_1', { ...stored, sealed_credentials: 42 }),
  ];
  for (const open of cases) {
    assert.throws(
      open,
      (err) =>
        isAppError(err) &&
        err.code === 'internal_error' &&
        /server secret changed/.test(err.message),
    );
  }
});
