/**
 * block_requests, block_resources, headers, cookies and http_auth through the HTTP surface,
 * behind the egress proxy: what the target receives, that only the asking account's capture
 * carries them (two accounts at once, and the other account's next capture), the cache
 * entries they make, and the 400s that name the field without spending quota. An HTTP
 * authentication challenge without credentials is cancelled, never waited on.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page } from '../helpers/fixtures.ts';

describe('capture API: request options', () => {
  let t: TestApp;
  let site: FixtureSite;
  /** Requests the target received, by the `id` in their query, then by path. */
  const received = new Map<string, Map<string, IncomingHttpHeaders>>();
  /** The status the page's XHR to a challenged path ended with, by `id`. */
  const xhrStatus = new Map<string, string>();
  let n = 0;

  const record = (url: string | undefined, headers: IncomingHttpHeaders) => {
    const parsed = new URL(url ?? '/', 'http://fixture');
    const id = parsed.searchParams.get('id') ?? '';
    const seen = received.get(id) ?? new Map<string, IncomingHttpHeaders>();
    seen.set(parsed.pathname, headers);
    received.set(id, seen);
  };

  before(async () => {
    ({ t, site } = await startCaptureSite({
      '/page': (req, res) => {
        record(req.url, req.headers);
        const id = new URL(req.url ?? '/', 'http://fixture').searchParams.get('id') ?? '';
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            page(`<img src="/pixel.png?id=${id}"><script src="/ads/track.js?id=${id}"></script>`),
          );
      },
      '/pixel.png': (req, res) => {
        record(req.url, req.headers);
        res.writeHead(404).end();
      },
      '/ads/track.js': (req, res) => {
        record(req.url, req.headers);
        res.writeHead(200, { 'content-type': 'text/javascript' }).end('');
      },
      // An image and an XHR that ask for credentials (HTTP Basic); the XHR's outcome comes
      // back as a beacon.
      '/challenged': (req, res) => {
        const id = new URL(req.url ?? '/', 'http://fixture').searchParams.get('id') ?? '';
        res.writeHead(200, { 'content-type': 'text/html' }).end(
          page(`<img src="/locked.png?id=${id}"><script>
            const xhr = new XMLHttpRequest();
            xhr.open('GET', '/locked.txt?id=${id}');
            xhr.onloadend = () => { new Image().src = '/xhr-done?id=${id}&status=' + xhr.status; };
            xhr.send();
          </script>`),
        );
      },
      '/locked.png': (req, res) => {
        record(req.url, req.headers);
        res.writeHead(401, { 'www-authenticate': 'Basic realm="locked"' }).end();
      },
      '/locked.txt': (req, res) => {
        record(req.url, req.headers);
        res.writeHead(401, { 'www-authenticate': 'Basic realm="locked"' }).end('locked');
      },
      '/xhr-done': (req, res) => {
        const query = new URL(req.url ?? '/', 'http://fixture').searchParams;
        xhrStatus.set(query.get('id') ?? '', query.get('status') ?? '');
        res.writeHead(204).end();
      },
    }));
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, body: Record<string, unknown>) => postCapture(t, key, body);

  it("sends an account's headers, cookies and credentials to its own captures only", async () => {
    const [a, b] = await Promise.all([newApiKey(t), newApiKey(t)]);
    const ids = [String(++n), String(++n)];
    const [mine, theirs] = await Promise.all([
      capture(a, {
        url: `${site.origin}/page?id=${ids[0]}`,
        headers: { 'X-Account': 'a-secret' },
        cookies: [{ name: 'sid', value: 'a-cookie' }],
        http_auth: { username: 'alice', password: 'pw' },
        block_requests: ['*/ads/*'],
        block_resources: ['image'],
      }),
      capture(b, { url: `${site.origin}/page?id=${ids[1]}` }),
    ]);
    assert.equal(mine.status, 201, await mine.clone().text());
    assert.equal(theirs.status, 201, await theirs.clone().text());
    const seenA = received.get(ids[0] as string);
    const seenB = received.get(ids[1] as string);
    const doc = seenA?.get('/page');
    assert.equal(doc?.['x-account'], 'a-secret');
    assert.equal(doc?.cookie, 'sid=a-cookie');
    assert.equal(doc?.authorization, `Basic ${btoa('alice:pw')}`);
    assert.deepEqual([...(seenA?.keys() ?? [])], ['/page'], 'image and ad script blocked');
    assert.deepEqual([...(seenB?.keys() ?? [])].sort(), ['/ads/track.js', '/page', '/pixel.png']);
    for (const [path, headers] of seenB ?? []) {
      assert.equal(headers['x-account'], undefined, path);
      assert.equal(headers.cookie, undefined, path);
      assert.equal(headers.authorization, undefined, path);
    }
    // A's next capture without them carries none of them either.
    const later = String(++n);
    assert.equal((await capture(a, { url: `${site.origin}/page?id=${later}` })).status, 201);
    const next = received.get(later)?.get('/page');
    assert.equal(next?.['x-account'], undefined);
    assert.equal(next?.cookie, undefined);
    assert.equal(next?.authorization, undefined);
  });

  it('makes them part of the cache key', async () => {
    const key = await newApiKey(t);
    const body = { url: `${site.origin}/page?id=cache-${++n}`, headers: { 'X-A': '1' } };
    const cached = async (b: Record<string, unknown>) => {
      const res = await capture(key, b);
      assert.equal(res.status, 201, await res.clone().text());
      return ((await res.json()) as { cached: boolean }).cached;
    };
    assert.deepEqual([await cached(body), await cached(body)], [false, true]);
    for (const change of [
      { headers: { 'X-A': '2' } },
      { cookies: [{ name: 'c', value: '1' }] },
      { http_auth: { username: 'u', password: 'p' } },
      { block_requests: ['*.png*'] },
      { block_resources: ['script'] },
    ]) {
      assert.equal(await cached({ ...body, ...change }), false, JSON.stringify(change));
    }
  });

  it('cancels a challenge it has no credentials for: 201 well within the deadline', async () => {
    const key = await newApiKey(t);
    const credentials = { username: 'alice', password: 'pw' };
    for (const httpAuth of [undefined, credentials]) {
      const id = String(++n);
      const started = Date.now();
      const res = await capture(key, {
        url: `${site.origin}/challenged?id=${id}`,
        ...(httpAuth ? { http_auth: httpAuth } : {}),
      });
      const took = Date.now() - started;
      assert.equal(res.status, 201, `${JSON.stringify(httpAuth)}: ${await res.text()}`);
      // The render deadline is 30 s; a challenge waited on would hold the capture until then.
      assert.ok(took < 15_000, `took ${took} ms`);
      // The XHR ended with the 401, as when a person cancels the login prompt.
      assert.equal(xhrStatus.get(id), '401');
      const seen = received.get(id);
      const expected = httpAuth ? `Basic ${btoa('alice:pw')}` : undefined;
      for (const path of ['/locked.png', '/locked.txt']) {
        // Asked once, with the target's own credentials or with none: never answered with
        // anything else.
        assert.ok(seen?.has(path), path);
        assert.equal(seen?.get(path)?.authorization, expected, path);
      }
    }
  });

  it('refuses a malformed value with a 400 naming the field, spending no quota', async () => {
    const key = await newApiKey(t);
    const url = `${site.origin}/page?id=refused`;
    const many = (count: number, make: (i: number) => unknown) =>
      Array.from({ length: count }, (_, i) => make(i));
    for (const [field, value, message] of [
      [
        'block_requests',
        many(51, (i) => `*/${i}/*`),
        /^block_requests must have at most 50 items$/,
      ],
      ['block_requests', ['has space'], /^block_requests\[0\] may hold printable ASCII/],
      ['block_requests', [''], /^block_requests\[0\] must not be empty$/],
      ['block_resources', ['image', 'video'], /^block_resources\[1\] must be one of image, media/],
      ['headers', { Host: 'evil.test' }, /^headers: Host may not be set$/],
      ['headers', { cookie: 'a=1' }, /^headers: cookie may not be set$/],
      ['headers', { 'Proxy-Authorization': 'x' }, /^headers: Proxy-Authorization may not be set$/],
      ['headers', { 'Transfer-Encoding': 'chunked' }, /may not be set$/],
      ['headers', { 'Content-Length': '1' }, /may not be set$/],
      ['headers', { 'Bad Name': 'x' }, /^headers: "Bad Name" is not a valid header name$/],
      ['headers', { 'X-A': 'a\r\nX-B: b' }, /^headers\.X-A may hold printable ASCII/],
      ['headers', { 'X-A': 'x'.repeat(1025) }, /^headers\.X-A must be at most 1024 characters$/],
      ['headers', { 'X-A': 1 }, /^headers\.X-A must be a string$/],
      ['headers', { 'X-A': '1', 'x-a': '2' }, /^headers: x-a is given twice$/],
      [
        'headers',
        Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-${i}`, '1'])),
        /^headers must have at most 20 entries$/,
      ],
      ['cookies', [{ name: 'a' }], /^cookies\[0\]\.value is required$/],
      ['cookies', [{ name: 'a b', value: '1' }], /^cookies\[0\]\.name is not a valid cookie/],
      ['cookies', [{ name: 'a', value: '1;b=2' }], /^cookies\[0\]\.value may hold/],
      [
        'cookies',
        [{ name: 'a', value: '1', domain: 'other.test' }],
        /^cookies\[0\]\.domain must be the target's host \(127\.0\.0\.1\)/,
      ],
      [
        'cookies',
        [{ name: 'a', value: '1', same_site: 'None' }],
        /^cookies\[0\]: same_site "None" needs secure: true$/,
      ],
      [
        'cookies',
        [{ name: 'a', value: '1', secure: true }],
        /^cookies\[0\]: a secure cookie needs an https url$/,
      ],
      [
        'cookies',
        [{ name: 'a', value: '1', expires: 1 }],
        /^unknown field "cookies\[0\]\.expires"/,
      ],
      ['cookies', many(51, (i) => ({ name: `c${i}`, value: '1' })), /must have at most 50 items$/],
      ['http_auth', { username: 'a:b', password: 'p' }, /^http_auth\.username must not be empty/],
      ['http_auth', { username: 'a' }, /^http_auth\.password is required$/],
      ['http_auth', { username: 'a', password: 'p\n' }, /^http_auth\.password must not hold/],
    ] as const) {
      const res = await capture(key, { url, [field]: value });
      assert.equal(res.status, 400, `${field}: ${JSON.stringify(value).slice(0, 80)}`);
      const body = (await res.json()) as { error: string; code: string };
      assert.equal(body.code, 'invalid_request');
      assert.match(body.error, message);
    }
    const both = await capture(key, {
      url,
      headers: { Authorization: 'Bearer x' },
      http_auth: { username: 'u', password: 'p' },
    });
    assert.equal(both.status, 400);
    assert.match(
      ((await both.json()) as { error: string }).error,
      /^http_auth is not allowed with an Authorization header in headers$/,
    );
    const usage = await fetch(`${t.url}/v1/usage`, { headers: { 'x-api-key': key } });
    assert.equal(((await usage.json()) as { used: number }).used, 0);
  });
});
