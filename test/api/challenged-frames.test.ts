/**
 * An HTTP authentication challenge inside a cross-site iframe (another process, with site
 * isolation): cancelled like one in the page itself, so the capture ends well within its
 * deadline (docs/security.md, "HTTP authentication challenges"). Unlike a challenge in the
 * page's own frame, this one did not hang before the cancelling was added either (checked on
 * the earlier code): the test keeps it so, since the cancelling is set up per page session.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describe('a challenge in a cross-site iframe', () => {
  let t: TestApp;
  let outer: FixtureSite;
  let framed: FixtureSite;

  before(async () => {
    // Another loopback address is another site: the frame renders out of process.
    framed = await startSite(
      {
        '/frame': page('<img src="/locked.png"><p>frame</p>'),
        '/locked.png': (_req, res) => {
          res.writeHead(401, { 'www-authenticate': 'Basic realm="locked"' }).end();
        },
      },
      '127.0.0.2',
    );
    outer = await startSite({
      '/': page(`<iframe src="${framed.origin}/frame" width="300" height="200"></iframe>`),
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: `${outer.hostPort},${framed.hostPort}` },
    });
  });
  after(async () => {
    await t?.close();
    await outer?.close();
    await framed?.close();
  });

  it('is cancelled: 201 well within the 30 s deadline', async () => {
    const key = await newApiKey(t);
    const started = Date.now();
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${outer.origin}/`, width: 400, height: 300 },
    });
    assert.equal(res.status, 201, await res.text());
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    assert.equal(framed.hits.get('/locked.png'), 1, 'the framed image was asked for');
  });
});
