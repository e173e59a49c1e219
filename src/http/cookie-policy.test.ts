import assert from 'node:assert/strict';
import { it } from 'node:test';
import { isCrossSite, sessionCookiePolicy } from './cookie-policy.ts';

const u = (s: string) => new URL(s);

it('decides same-site by scheme and registrable domain, not by port or subdomain', () => {
  assert.equal(isCrossSite(u('https://app.example.com'), u('https://api.example.com')), false);
  assert.equal(isCrossSite(u('https://example.com'), u('https://api.example.com')), false);
  assert.equal(isCrossSite(u('http://127.0.0.1:5173'), u('http://127.0.0.1:8080')), false);
  assert.equal(isCrossSite(u('https://a.example.co.uk'), u('https://b.example.co.uk')), false);
  assert.equal(isCrossSite(u('https://example.co.uk'), u('https://other.co.uk')), true);
  assert.equal(isCrossSite(u('https://dash.example.net'), u('https://api.example.com')), true);
  assert.equal(isCrossSite(u('http://app.example.com'), u('https://api.example.com')), true);
  assert.equal(isCrossSite(u('http://localhost:5173'), u('http://127.0.0.1:8080')), true);
  assert.equal(isCrossSite(u('http://[::1]:5173'), u('http://[::1]:8080')), false);
});

it('uses SameSite=None only for a cross-site dashboard on an https API', () => {
  const api = u('https://api.example.com');
  assert.deepEqual(sessionCookiePolicy(api, ['https://api.example.com']), {
    secure: true,
    sameSite: 'lax',
  });
  assert.deepEqual(sessionCookiePolicy(api, ['https://app.example.com']), {
    secure: true,
    sameSite: 'lax',
  });
  assert.deepEqual(sessionCookiePolicy(api, ['https://app.example.com', 'https://shots.dev']), {
    secure: true,
    sameSite: 'none',
  });
  // None without Secure is dropped by browsers, so plain http keeps Lax.
  assert.deepEqual(sessionCookiePolicy(u('http://localhost:8080'), ['http://dash.test:5173']), {
    secure: false,
    sameSite: 'lax',
  });
});
