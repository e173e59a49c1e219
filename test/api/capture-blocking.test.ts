/**
 * block_ads, block_trackers and block_cookie_banners through the HTTP surface, behind the
 * egress proxy: two accounts capture the same page at once, and only the one that asked has
 * its ad and tracker requests kept from the third-party host; each flag is its own cache
 * entry; a value that is not a boolean is a 400 naming the field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describe('capture API: blocking', () => {
  let t: TestApp;
  let site: FixtureSite;
  let third: FixtureSite;
  /** Third-party requests, by the capture id in their query. */
  const thirdHits = new Map<string, string[]>();

  before(async () => {
    third = await startSite(
      Object.fromEntries(
        ['/js/jquery.popunder.js', '/piwik.js'].map((path) => [
          path,
          (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
            const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
            thirdHits.set(id, [...(thirdHits.get(id) ?? []), path]);
            res.writeHead(200, { 'content-type': 'text/javascript' }).end('');
          },
        ]),
      ),
      '127.0.0.2',
    );
    site = await startSite({
      '/page': (req, res) => {
        const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '';
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            page(
              `<p>article</p><script src="${third.origin}/js/jquery.popunder.js?id=${id}"></script>` +
                `<script src="${third.origin}/piwik.js?id=${id}"></script>`,
            ),
          );
      },
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${site.hostPort},${third.hostPort}` },
      plans: { free: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
    await third?.close();
  });

  it("keeps one account's ads and trackers out, not the other's", async () => {
    const [a, b] = await Promise.all([newApiKey(t), newApiKey(t)]);
    const [mine, theirs] = await Promise.all([
      postCapture(t, a, {
        url: `${site.origin}/page?id=a`,
        block_ads: true,
        block_trackers: true,
        block_cookie_banners: true,
      }),
      postCapture(t, b, { url: `${site.origin}/page?id=b` }),
    ]);
    assert.equal(mine.status, 201, await mine.clone().text());
    assert.equal(theirs.status, 201, await theirs.clone().text());
    assert.deepEqual(thirdHits.get('a'), undefined);
    assert.deepEqual(thirdHits.get('b')?.sort(), ['/js/jquery.popunder.js', '/piwik.js']);
  });

  it('makes each flag its own cache entry, and refuses a non-boolean naming it', async () => {
    const key = await newApiKey(t);
    const url = `${site.origin}/page?id=cache`;
    const cached = async (body: Record<string, unknown>) => {
      const res = await postCapture(t, key, { url, ...body });
      assert.equal(res.status, 201, await res.clone().text());
      return ((await res.json()) as { cached: boolean }).cached;
    };
    assert.equal(await cached({}), false);
    for (const flag of ['block_ads', 'block_trackers', 'block_cookie_banners']) {
      assert.equal(await cached({ [flag]: true }), false, flag);
      assert.equal(await cached({ [flag]: true }), true, flag);
      const res = await postCapture(t, key, { url, [flag]: 'yes' });
      assert.equal(res.status, 400);
      assert.equal(
        ((await res.json()) as { error: string }).error,
        `${flag} must be a boolean (true or false)`,
      );
    }
    assert.equal(await cached({ block_ads: false }), true, 'false is the default: no new entry');
  });
});
