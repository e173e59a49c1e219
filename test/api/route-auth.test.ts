/**
 * Every operation of the committed API description (openapi.json) gets the same
 * authentication checks (docs/api.md, "Authentication"), so a route added tomorrow is covered
 * the day it appears in the document: an operation is either authenticated, by an API key or
 * by the session cookie, and checked here, or public and listed in PUBLIC with its reason.
 *
 * An API-key operation answers 401 without a key, with a malformed one, with an unknown one,
 * with a revoked one, and with only a session cookie. A session operation answers 401 without
 * a cookie, with a malformed one, with an ended session, and with only an API key (valid or
 * revoked); one that changes state answers 403 to a cookie-authenticated request from another
 * site. Authentication answers before the body is read, so an unparsable body still gets 401.
 * With a good credential none of them answers 401 or 403, so the refusals above are the
 * credential's doing and not the path's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateApiKey } from '../../src/domain/api-key-format.ts';
import { account } from '../helpers/accounts.ts';
import { createKey, describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';

type Scheme = 'apiKey' | 'session';

interface Schema {
  type?: string;
  format?: string;
  enum?: unknown[];
  minLength?: number;
  minimum?: number;
  required?: string[];
  properties?: Record<string, Schema>;
}

interface Operation {
  security?: Array<Record<string, string[]>>;
  requestBody?: { content: Record<string, { schema: Schema }> };
}

const doc = JSON.parse(
  readFileSync(path.resolve(import.meta.dirname, '..', '..', 'openapi.json'), 'utf8'),
) as { paths: Record<string, Record<string, Operation>> };

/** Operations anyone may call, by `METHOD /path` as the document writes it, and why. */
const PUBLIC: Record<string, { reason: string; refusesCrossSite?: true }> = {
  'GET /healthz': { reason: 'the liveness probe' },
  'GET /readyz': { reason: 'the readiness probe' },
  'GET /v1/plans': { reason: 'the pricing table, read before anyone signs up' },
  'GET /v1/devices': { reason: 'the device presets, reference data' },
  'POST /v1/auth/signup': { reason: 'makes the account and its session', refusesCrossSite: true },
  'POST /v1/auth/login': { reason: 'issues the session', refusesCrossSite: true },
  'POST /demo/screenshot': { reason: 'the landing page demo, limited per IP' },
  'GET /images/{file}': { reason: 'hosted images, named by an unguessable id' },
  'GET /v1/render': {
    reason:
      "a signed link: the key's signing secret signs the query (test/api/render-link.test.ts)",
  },
  'POST /v1/billing/webhook': {
    reason: "the billing provider's signature (test/billing/stripe-webhook.test.ts)",
  },
};

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const UNAUTHORIZED = { error: 'unauthorized' };
const CROSS_SITE = { error: 'cross-site request refused' };
const FOREIGN_ORIGIN = 'https://evil.example';

interface Route {
  name: string;
  method: string;
  /** The path with its parameters filled in. */
  url: string;
  scheme: Scheme | null;
  declared: Scheme[];
  body: unknown;
}

const routes: Route[] = Object.entries(doc.paths).flatMap(([template, operations]) =>
  METHODS.filter((m) => operations[m]).map((m) => {
    const op = operations[m] as Operation;
    const method = m.toUpperCase();
    const name = `${method} ${template}`;
    const declared = (op.security ?? []).flatMap((s) => Object.keys(s)) as Scheme[];
    const scheme = declared[0] ?? null;
    const schema = op.requestBody?.content['application/json']?.schema;
    return {
      name,
      method,
      // Any id will do: authentication answers before the id is looked at.
      url: template.replace(/\{[^}]+\}/g, '4242'),
      scheme,
      declared,
      body: schema ? sample(schema, '') : undefined,
    };
  }),
);

/**
 * A value the schema accepts, so that with a good credential validation passes too. The
 * `url` a capture asks for is the loopback, which the egress check refuses (400) before any
 * render starts.
 */
function sample(schema: Schema, name: string): unknown {
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object':
      return Object.fromEntries(
        (schema.required ?? []).map((key) => [key, sample(schema.properties?.[key] ?? {}, key)]),
      );
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      if (schema.format === 'email' || name === 'email') return 'someone@example.com';
      if (name === 'url') return 'http://127.0.0.1:9/';
      return 'x'.repeat(Math.max(schema.minLength ?? 1, 8));
  }
}

/** The key with its last checksum character changed: well shaped, but malformed. */
function tampered(key: string): string {
  return key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a');
}

describe('the API description names how every operation authenticates', () => {
  it('each operation is authenticated or public, never both', () => {
    const unknown = routes.filter((r) => r.scheme === null && !PUBLIC[r.name]).map((r) => r.name);
    assert.deepEqual(unknown, [], 'declare `security` in the route schema, or list it in PUBLIC');
    const both = routes.filter((r) => r.scheme !== null && PUBLIC[r.name]).map((r) => r.name);
    assert.deepEqual(both, []);
    for (const r of routes) {
      assert.ok(r.declared.length <= 1, `${r.name} declares more than one scheme`);
    }
  });

  it('the lists name operations of the document, as they stand', () => {
    const names = new Set(routes.map((r) => r.name));
    assert.deepEqual(
      Object.keys(PUBLIC).filter((n) => !names.has(n)),
      [],
      'PUBLIC names operations the document does not have',
    );
  });
});

describeEachDatabase('route authentication', (db) => {
  let t: TestApp;
  /** A working key and session of one account. */
  let key: string;
  let cookie: string;
  let revokedKey: string;
  let endedSession: string;

  before(async () => {
    t = await startApp({ db });
    ({ cookie, key } = await account(t, { key: true }));
    const revoked = await createKey(t, cookie);
    assert.equal(
      (await t.fetch('/v1/usage', { headers: { 'x-api-key': revoked.key } })).status,
      200,
    );
    const revoke = await t.fetch(`/v1/keys/${revoked.id}`, { method: 'DELETE', cookie });
    assert.equal(revoke.status, 200);
    revokedKey = revoked.key;
    const ended = await signUp(t);
    const logout = await t.fetch('/v1/auth/logout', { method: 'POST', cookie: ended.cookie });
    assert.equal(logout.status, 200);
    endedSession = ended.cookie;
  });
  after(() => t.close());

  /** The route asked with its sample body (if it takes one) and these headers. */
  const ask = (r: Route, headers: Record<string, string> = {}, as?: { cookie: string }) =>
    t.fetch(r.url, {
      method: r.method,
      headers,
      ...(r.body === undefined ? {} : { json: r.body }),
      ...(as ? { cookie: as.cookie } : {}),
    });

  async function refused(res: Response, status: 401 | 403, what: string): Promise<void> {
    const body = await res.text();
    assert.equal(res.status, status, `${what}: ${body}`);
    assert.deepEqual(JSON.parse(body), status === 401 ? UNAUTHORIZED : CROSS_SITE, what);
  }

  /** Authentication answers before the body is parsed or validated. */
  function authenticatesBeforeTheBody(r: Route): void {
    if (r.body === undefined) return;
    it('401 without a credential even when the body is not JSON', async () => {
      const res = await t.fetch(r.url, {
        method: r.method,
        headers: { 'content-type': 'application/json' },
        body: '{"not json',
      });
      await refused(res, 401, 'unparsable body');
    });
  }

  for (const r of routes.filter((route) => route.scheme === 'apiKey')) {
    describe(`${r.name} (API key)`, () => {
      it('401 without a key, with a malformed, an unknown or a revoked one', async () => {
        await refused(await ask(r), 401, 'no key');
        await refused(await ask(r, { 'x-api-key': 'not-a-key' }), 401, 'garbage');
        await refused(await ask(r, { 'x-api-key': tampered(key) }), 401, 'bad checksum');
        await refused(await ask(r, { 'x-api-key': generateApiKey().key }), 401, 'unknown key');
        await refused(await ask(r, { 'x-api-key': revokedKey }), 401, 'revoked key');
      });

      it('401 with a session cookie and no key', async () => {
        await refused(await ask(r, {}, { cookie }), 401, 'cookie only');
      });

      authenticatesBeforeTheBody(r);

      it('a good key gets past authentication', async () => {
        const res = await ask(r, { 'x-api-key': key });
        assert.ok(![401, 403].includes(res.status), `${res.status} ${await res.text()}`);
      });
    });
  }

  for (const r of routes.filter((route) => route.scheme === 'session')) {
    describe(`${r.name} (session)`, () => {
      it('401 without a cookie, with a malformed one or an ended session', async () => {
        await refused(await ask(r), 401, 'no cookie');
        await refused(await ask(r, {}, { cookie: 'session=not-a-session' }), 401, 'malformed');
        await refused(await ask(r, {}, { cookie: endedSession }), 401, 'ended session');
      });

      it('401 with an API key, good or revoked, and no cookie', async () => {
        await refused(await ask(r, { 'x-api-key': key }), 401, 'good key');
        await refused(await ask(r, { 'x-api-key': revokedKey }), 401, 'revoked key');
      });

      authenticatesBeforeTheBody(r);

      if (UNSAFE.has(r.method)) {
        it('403 for a cookie-authenticated request from another site', async () => {
          await refused(await ask(r, { origin: FOREIGN_ORIGIN }, { cookie }), 403, 'Origin');
          const fetchSite = await ask(r, { 'sec-fetch-site': 'cross-site' }, { cookie });
          await refused(fetchSite, 403, 'Sec-Fetch-Site');
        });
      }

      it('a good session gets past authentication, from the dashboard origin', async () => {
        // A session of its own: the operation may be the log-out.
        const own = await signUp(t);
        const res = await ask(r, UNSAFE.has(r.method) ? { origin: t.url } : {}, own);
        assert.ok(![401, 403].includes(res.status), `${res.status} ${await res.text()}`);
      });
    });
  }

  for (const r of routes.filter((route) => PUBLIC[route.name]?.refusesCrossSite)) {
    it(`${r.name} (public) refuses another site with 403`, async () => {
      await refused(await ask(r, { origin: FOREIGN_ORIGIN }), 403, 'Origin');
      await refused(await ask(r, { 'sec-fetch-site': 'cross-site' }), 403, 'Sec-Fetch-Site');
    });
  }
});
