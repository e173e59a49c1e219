import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import {
  describeEachDatabase,
  PASSWORD,
  sessionCookie,
  signUp,
  startApp,
  type TestApp,
  uniqueEmail,
} from './helpers/app.ts';

describeEachDatabase('accounts and sessions', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('signs up with 201, the user body and a session cookie with the right flags', async () => {
    const email = uniqueEmail();
    const res = await t.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email, password: PASSWORD },
    });
    assert.equal(res.status, 201);
    const body = (await res.json()) as { user: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.user).sort(), ['created_at', 'email', 'id', 'plan']);
    assert.equal(body.user.email, email);
    assert.equal(body.user.plan, 'free');
    assert.ok(Number.isInteger(body.user.id));
    assert.ok(!Number.isNaN(Date.parse(String(body.user.created_at))));
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='));
    assert.ok(cookie);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Secure/, 'http public URL: no Secure flag');
  });

  it('me answers with the session user, 401 without one', async () => {
    const { cookie, email } = await signUp(t);
    const me = await t.fetch('/v1/auth/me', { cookie });
    assert.equal(me.status, 200);
    assert.equal(((await me.json()) as { user: { email: string } }).user.email, email);
    const anon = await t.fetch('/v1/auth/me');
    assert.equal(anon.status, 401);
    assert.deepEqual(await anon.json(), { error: 'unauthorized' });
    const bogus = await t.fetch('/v1/auth/me', { cookie: 'session=not-a-real-session' });
    assert.equal(bogus.status, 401);
  });

  it('refuses a duplicate email (case-insensitive) with 409', async () => {
    const { email } = await signUp(t);
    const res = await t.fetch('/v1/auth/signup', {
      method: 'POST',
      json: { email: email.toUpperCase(), password: PASSWORD },
    });
    assert.equal(res.status, 409);
    assert.equal(typeof ((await res.json()) as { error: string }).error, 'string');
  });

  it('validates signup input with messages naming the field', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ email: uniqueEmail(), password: 'short' }, /password/],
      [{ email: uniqueEmail(), password: 'x'.repeat(257) }, /password/],
      [{ email: 'not-an-email', password: PASSWORD }, /email/],
      [{ password: PASSWORD }, /email is required/],
      [{ email: uniqueEmail(), password: PASSWORD, plan: 'pro' }, /unknown field "plan"/],
      [{ email: uniqueEmail(), password: 12345678 }, /password must be a string/],
    ];
    for (const [json, pattern] of cases) {
      const res = await t.fetch('/v1/auth/signup', { method: 'POST', json });
      assert.equal(res.status, 400, JSON.stringify(json));
      const body = (await res.json()) as { error: string; code: string };
      assert.match(body.error, pattern);
      assert.equal(body.code, 'invalid_request');
    }
  });

  it('logs in with a fresh session id each time, never the one sent in', async () => {
    const { cookie: first, email } = await signUp(t);
    const res = await t.fetch('/v1/auth/login', {
      method: 'POST',
      cookie: first,
      json: { email, password: PASSWORD },
    });
    assert.equal(res.status, 200);
    const second = sessionCookie(res);
    assert.notEqual(second, first);
    assert.equal((await t.fetch('/v1/auth/me', { cookie: second })).status, 200);
  });

  it('gives the same answer for an unknown email and a wrong password', async () => {
    const { email } = await signUp(t);
    const wrong = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email, password: 'wrong password' },
    });
    const unknown = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email: uniqueEmail('nobody'), password: PASSWORD },
    });
    assert.equal(wrong.status, 401);
    assert.equal(unknown.status, 401);
    const a = await wrong.json();
    const b = await unknown.json();
    assert.deepEqual(a, { error: 'invalid email or password' });
    assert.deepEqual(b, a);
    assert.equal(wrong.headers.getSetCookie().length, 0);
  });

  it('logout ends the session server-side', async () => {
    const { cookie } = await signUp(t);
    const res = await t.fetch('/v1/auth/logout', { method: 'POST', cookie });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { success: boolean; message: string };
    assert.equal(body.success, true);
    assert.equal(typeof body.message, 'string');
    // The old cookie value, replayed, no longer works.
    assert.equal((await t.fetch('/v1/auth/me', { cookie })).status, 401);
  });

  it('refuses cross-site state changes with 403, allows the dashboard origin', async () => {
    const { cookie } = await signUp(t);
    const evil = await t.fetch('/v1/keys', {
      method: 'POST',
      cookie,
      json: {},
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(evil.status, 403);
    const fetchSite = await t.fetch('/v1/keys', {
      method: 'POST',
      cookie,
      json: {},
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(fetchSite.status, 403);
    const loginCsrf = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email: 'a@b.co', password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    assert.equal(loginCsrf.status, 403);
    const own = await t.fetch('/v1/keys', {
      method: 'POST',
      cookie,
      json: {},
      headers: { origin: t.url },
    });
    assert.equal(own.status, 201);
    // Reads are not state changes.
    const read = await t.fetch('/v1/keys', { cookie, headers: { origin: 'https://evil.example' } });
    assert.equal(read.status, 200);
  });

  it('an API key never authenticates a cookie endpoint', async () => {
    const { cookie } = await signUp(t);
    const created = (await (
      await t.fetch('/v1/keys', { method: 'POST', cookie, json: {} })
    ).json()) as {
      key: string;
    };
    for (const [method, p] of [
      ['GET', '/v1/keys'],
      ['POST', '/v1/keys'],
      ['GET', '/v1/auth/me'],
      ['DELETE', '/v1/keys/1'],
    ] as const) {
      const res = await t.fetch(p, {
        method,
        headers: { 'x-api-key': created.key },
        ...(method === 'POST' ? { json: {} } : {}),
      });
      assert.equal(res.status, 401, `${method} ${p}`);
      assert.deepEqual(await res.json(), { error: 'unauthorized' });
    }
  });

  it('throttles login after 10 failures for one email, even with the right password', async () => {
    const { email } = await signUp(t);
    for (let i = 0; i < 10; i++) {
      const res = await t.fetch('/v1/auth/login', {
        method: 'POST',
        json: { email, password: `wrong-${i}-xx` },
      });
      assert.equal(res.status, 401);
    }
    const blocked = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email, password: PASSWORD },
    });
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get('retry-after')) > 0);
    const body = (await blocked.json()) as Record<string, unknown>;
    assert.equal(typeof body.error, 'string');
    assert.equal(body.success, false);
    assert.equal(body.remaining, 0);
    // Another account is not affected by this email's failures.
    const other = await signUp(t);
    const ok = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email: other.email, password: PASSWORD },
    });
    assert.equal(ok.status, 200);
  });
});

describeEachDatabase('login throttling under concurrency', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('lets at most 10 of 25 simultaneous wrong guesses for one email be tried', async () => {
    const { email } = await signUp(t);
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        t.fetch('/v1/auth/login', { method: 'POST', json: { email, password: `guess-${i}-xx` } }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    assert.equal(statuses.filter((s) => s === 401).length, 10, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 15, statuses.join(','));
  });
});

describeEachDatabase('login throttling per IP', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db });
  });
  after(() => t.close());

  it('refuses every login from an IP after 100 failures within the window', async () => {
    const { email } = await signUp(t);
    // 100 failures spread over 20 unknown emails, so the per-email limit never trips.
    for (let i = 0; i < 100; i++) {
      const res = await t.fetch('/v1/auth/login', {
        method: 'POST',
        json: { email: `ghost-${i % 20}@example.com`, password: 'nope nope' },
      });
      assert.equal(res.status, 401);
    }
    const res = await t.fetch('/v1/auth/login', {
      method: 'POST',
      json: { email, password: PASSWORD },
    });
    assert.equal(res.status, 429);
  });
});

describeEachDatabase('login throttling per IPv6 /64', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db, env: { TRUST_PROXY: '127.0.0.1' } });
  });
  after(() => t.close());

  it('adds up failures from addresses of one /64, and not those of another', async () => {
    const { email } = await signUp(t);
    const login = (ip: string, json: { email: string; password: string }) =>
      t.fetch('/v1/auth/login', { method: 'POST', json, headers: { 'x-forwarded-for': ip } });
    // 50 failures from each of two addresses in one /64 (a subscriber holds the whole /64).
    for (let i = 0; i < 100; i++) {
      const ip = i % 2 ? '2001:db8:a:b::1' : '2001:db8:a:b:cafe:0:0:2';
      const res = await login(ip, { email: `ghost-${i % 20}@example.com`, password: 'nope nope' });
      assert.equal(res.status, 401, `attempt ${i + 1}`);
      await res.body?.cancel();
    }
    const third = await login('2001:db8:a:b:ffff::3', { email, password: PASSWORD });
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers.get('retry-after')) >= 1);
    // The next /64 is another client.
    const other = await login('2001:db8:a:c::1', { email, password: PASSWORD });
    assert.equal(other.status, 200);
  });
});
