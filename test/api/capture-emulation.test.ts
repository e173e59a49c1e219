/**
 * user_agent, locale, timezone and media_type through the HTTP surface: what the target
 * receives, which account's capture it reaches (only the one that asked), the cache entries
 * they make, and the 400s that name the field.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startCaptureSite, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page } from '../helpers/fixtures.ts';

describe('capture API: request context and emulation', () => {
  let t: TestApp;
  let site: FixtureSite;
  /** The document requests the target received, by the `id` in their query. */
  const received = new Map<string, IncomingHttpHeaders>();
  let n = 0;

  before(async () => {
    ({ t, site } = await startCaptureSite({
      '/ua': (req, res) => {
        const id = new URL(req.url ?? '/', 'http://fixture').searchParams.get('id') ?? '';
        received.set(id, req.headers);
        res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>context</p>'));
      },
    }));
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = (key: string, body: Record<string, unknown>) => postCapture(t, key, body);

  it("sends an account's user agent and locale to its own captures only", async () => {
    const [a, b] = await Promise.all([newApiKey(t), newApiKey(t)]);
    const ids = [String(++n), String(++n)];
    const [mine, theirs] = await Promise.all([
      capture(a, {
        url: `${site.origin}/ua?id=${ids[0]}`,
        user_agent: 'AccountA-Agent/1.0',
        locale: 'de-CH',
        timezone: 'Europe/Zurich',
        media_type: 'print',
      }),
      capture(b, { url: `${site.origin}/ua?id=${ids[1]}` }),
    ]);
    assert.equal(mine.status, 201, await mine.clone().text());
    assert.equal(theirs.status, 201, await theirs.clone().text());
    const seenA = received.get(ids[0] as string);
    const seenB = received.get(ids[1] as string);
    assert.equal(seenA?.['user-agent'], 'AccountA-Agent/1.0');
    assert.match(String(seenA?.['accept-language']), /^de-CH\b/);
    assert.match(String(seenB?.['user-agent']), /Chrome\//);
    assert.doesNotMatch(String(seenB?.['accept-language']), /de-CH/);

    // B's next capture, after A's on the same service, still carries nothing of A's.
    const later = String(++n);
    const again = await capture(b, { url: `${site.origin}/ua?id=${later}` });
    assert.equal(again.status, 201);
    assert.doesNotMatch(String(received.get(later)?.['user-agent']), /AccountA/);
  });

  it('makes them part of the cache key', async () => {
    const key = await newApiKey(t);
    const url = `${site.origin}/ua?id=cache-${++n}`;
    const body = { url, user_agent: 'CacheAgent/1', locale: 'fr' };
    const first = (await (await capture(key, body)).json()) as { cached: boolean };
    const repeat = (await (await capture(key, body)).json()) as { cached: boolean };
    assert.deepEqual([first.cached, repeat.cached], [false, true]);
    for (const change of [
      { user_agent: 'CacheAgent/2' },
      { locale: 'it' },
      { timezone: 'Asia/Tokyo' },
      { media_type: 'print' },
    ]) {
      const res = await capture(key, { ...body, ...change });
      assert.equal(res.status, 201);
      assert.equal(
        ((await res.json()) as { cached: boolean }).cached,
        false,
        JSON.stringify(change),
      );
    }
  });

  it('refuses a malformed value with a 400 naming the field, spending no quota', async () => {
    const key = await newApiKey(t);
    const url = `${site.origin}/ua?id=refused`;
    for (const [field, value, message] of [
      ['user_agent', 'Agent/1\r\nX-Injected: yes', /^user_agent may hold printable ASCII/],
      ['user_agent', 'x'.repeat(513), /^user_agent must be at most 512 characters$/],
      ['user_agent', '', /^user_agent must not be empty$/],
      ['locale', 'en_US', /^locale must be a BCP 47 language tag/],
      ['timezone', 'Mars/Olympus_Mons', /^timezone "Mars\/Olympus_Mons" is not an IANA time zone/],
      ['timezone', 42, /^timezone must be a string$/],
      ['media_type', 'tv', /^media_type must be one of screen, print$/],
    ] as const) {
      const res = await capture(key, { url, [field]: value });
      assert.equal(res.status, 400, `${field}: ${JSON.stringify(value)}`);
      const body = (await res.json()) as { error: string; code: string };
      assert.equal(body.code, 'invalid_request');
      assert.match(body.error, message);
    }
    const usage = await fetch(`${t.url}/v1/usage`, { headers: { 'x-api-key': key } });
    assert.equal(((await usage.json()) as { used: number }).used, 0);
  });
});
