import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import Fastify from 'fastify';
import type { App } from '../src/http/types.ts';
import { registerWeb } from '../src/http/web.ts';
import { PASSWORD, startApp, type TestApp, uniqueEmail } from './helpers/app.ts';
import { buildWeb } from './helpers/web.ts';

/** How the app serves web/dist, and the headers a dashboard on another origin relies on. */
describe('web pages served by the app', () => {
  let t: TestApp;
  before(async () => {
    await buildWeb();
    t = await startApp({ db: 'sqlite' });
  });
  after(() => t.close());

  it('serves the landing page at / and the dashboard under /dashboard, with a strict CSP', async () => {
    for (const [p, marker] of [
      ['/', 'Screenshots of any web page'],
      ['/dashboard', 'Dashboard · Shotsmith'],
      ['/dashboard/', 'Dashboard · Shotsmith'],
      ['/dashboard/keys', 'Dashboard · Shotsmith'],
      ['/dashboard/anything/deeper', 'Dashboard · Shotsmith'],
    ] as const) {
      const res = await t.fetch(p);
      assert.equal(res.status, 200, p);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /style-src 'self'(;|$)/);
      assert.match(csp, new RegExp(`img-src 'self' data: blob: ${t.url}(;|$)`));
      assert.match(csp, new RegExp(`connect-src 'self' ${t.url}(;|$)`));
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(await res.text(), new RegExp(marker), p);
    }
  });

  it('serves hashed assets for a year, compressed when asked, and 404s unknown ones as JSON', async () => {
    const html = await (await t.fetch('/dashboard')).text();
    const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] ?? '');
    assert.ok(assets.some((a) => a.endsWith('.js')));
    assert.ok(assets.some((a) => a.endsWith('.css')));
    for (const asset of assets) {
      const res = await t.fetch(asset, { headers: { 'accept-encoding': 'br, gzip' } });
      assert.equal(res.status, 200, asset);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      if (/\.(js|css)$/.test(asset)) assert.equal(res.headers.get('content-encoding'), 'br');
    }
    const missing = await t.fetch('/assets/nope-123.js');
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /application\/json/);
    const dotfile = await t.fetch('/assets/../.build-stamp.json');
    assert.equal(dotfile.status, 404);
  });

  it('shadows no API route, /docs, /images or /healthz', async () => {
    const checks: Array<[string, number, RegExp]> = [
      ['/healthz', 200, /application\/json/],
      ['/v1/plans', 200, /application\/json/],
      ['/v1/openapi.json', 200, /application\/json/],
      ['/docs', 200, /text\/html/],
      ['/images/AAAAAAAAAAAAAAAAAAAAAA.png', 404, /application\/json/],
      ['/v1/keys', 401, /application\/json/],
      ['/nope', 404, /application\/json/],
      ['/dashboardx', 404, /application\/json/],
    ];
    for (const [p, status, type] of checks) {
      const res = await t.fetch(p);
      assert.equal(res.status, status, p);
      assert.match(res.headers.get('content-type') ?? '', type, p);
      // The pages' policy is theirs alone.
      assert.ok(!res.headers.get('content-security-policy')?.includes('connect-src'), p);
    }
    const post = await t.fetch('/', { method: 'POST' });
    assert.equal(post.status, 405);
  });

  it('answers a short page on how to build when web/dist is missing', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'shotsmith-no-web-'));
    const app = Fastify() as unknown as App;
    try {
      await registerWeb(app, { apiOrigin: 'http://localhost:8080', distDir: empty });
      for (const url of ['/', '/dashboard/keys']) {
        const res = await app.inject({ url });
        assert.equal(res.statusCode, 503);
        assert.match(res.headers['content-type'] ?? '', /text\/html/);
        assert.match(res.body, /The web build is missing/);
        assert.match(res.body, /npm run build:web/);
      }
    } finally {
      await app.close();
      await rm(empty, { recursive: true, force: true });
    }
  });
});

describe('CORS and the session cookie for a dashboard on another origin', () => {
  const dashboard = 'https://dash.shots.example';
  let t: TestApp;
  before(async () => {
    t = await startApp({
      db: 'sqlite',
      env: { PUBLIC_URL: 'https://api.example.com', DASHBOARD_ORIGINS: dashboard },
    });
  });
  after(() => t.close());

  const preflight = (origin: string, method = 'POST', headers = 'content-type') =>
    t.fetch('/v1/keys', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': method,
        'access-control-request-headers': headers,
      },
    });

  it('answers the preflight of a dashboard origin with credentials allowed', async () => {
    for (const [method, headers] of [
      ['POST', 'content-type'],
      ['DELETE', ''],
      ['PATCH', 'content-type'],
      ['POST', 'content-type,x-api-key'],
    ] as const) {
      const res = await preflight(dashboard, method, headers);
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('access-control-allow-origin'), dashboard);
      assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
      assert.match(res.headers.get('access-control-allow-methods') ?? '', new RegExp(method));
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /Content-Type/);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /X-API-Key/);
      assert.match(res.headers.get('vary') ?? '', /Origin/);
    }
  });

  it('gives any other origin no CORS headers at all', async () => {
    for (const origin of ['https://evil.example', 'https://api.example.com.evil.example', 'null']) {
      const res = await preflight(origin);
      assert.notEqual(res.status, 204, origin);
      assert.equal(res.headers.get('access-control-allow-origin'), null, origin);
      assert.equal(res.headers.get('access-control-allow-credentials'), null, origin);
      const read = await t.fetch('/v1/plans', { headers: { origin } });
      assert.equal(read.status, 200);
      assert.equal(read.headers.get('access-control-allow-origin'), null, origin);
      assert.match(read.headers.get('vary') ?? '', /Origin/);
    }
    // And its state-changing requests are refused before anything happens.
    const signup = await t.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email: uniqueEmail(), password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(signup.status, 403);
  });

  it('lets the dashboard read answers, errors included, and the headers it needs', async () => {
    const anon = await t.fetch('/v1/auth/me', { headers: { origin: dashboard } });
    assert.equal(anon.status, 401);
    assert.equal(anon.headers.get('access-control-allow-origin'), dashboard);
    assert.equal(anon.headers.get('access-control-allow-credentials'), 'true');
    const exposed = anon.headers.get('access-control-expose-headers') ?? '';
    for (const h of ['X-RateLimit-Remaining', 'Retry-After', 'X-Request-Id', 'X-Cache']) {
      assert.match(exposed, new RegExp(h));
    }
  });

  it('sets the session cookie SameSite=None; Secure for a cross-site dashboard on https', async () => {
    const res = await t.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email: uniqueEmail(), password: PASSWORD },
      headers: { origin: dashboard },
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('access-control-allow-origin'), dashboard);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session=')) ?? '';
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; Secure/);
    assert.match(cookie, /; SameSite=None/);
  });

  it('keeps SameSite=Lax for a dashboard on the same site', async () => {
    const sameSite = await startApp({
      db: 'sqlite',
      env: { PUBLIC_URL: 'https://api.example.com', DASHBOARD_ORIGINS: 'https://app.example.com' },
    });
    try {
      const res = await sameSite.fetch('/v1/auth/signup', {
        method: 'POST',
        json: { email: uniqueEmail(), password: PASSWORD },
        headers: { origin: 'https://app.example.com' },
      });
      assert.equal(res.status, 201);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session=')) ?? '';
      assert.match(cookie, /; Secure/);
      assert.match(cookie, /; SameSite=Lax/);
    } finally {
      await sameSite.close();
    }
  });
});
