/**
 * `metadata`: the page's title, description, Open Graph tags and icon in the 201, read after
 * a redirect, null where the page has none, cut where the page is hostile, and the same on a
 * cache hit (stored with the record, on SQLite and on PostgreSQL).
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import {
  type DbKind,
  describeEachDatabase,
  postCapture,
  startApp,
  type TestApp,
} from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describeEachDatabase('capture API: metadata', (db: DbKind) => {
  let t: TestApp;
  let site: FixtureSite;
  before(async () => {
    site = await startSite({
      '/start': (_req, res) => {
        res.writeHead(302, { location: '/article' }).end();
      },
      '/article': page(
        '<h1>Body</h1>',
        `<title>  The   article </title>
         <meta name="description" content="What it is about.">
         <meta property="og:title" content="OG title">
         <meta property="og:description" content="OG description">
         <meta property="og:image" content="/images/card.png">
         <link rel="icon" href="/favicon-32.png">`,
      ),
      '/bare': '<!doctype html><p>nothing</p>',
      '/hostile': page(
        '<p>x</p>',
        `<title>${'T'.repeat(5_000)}</title>
         <meta property="og:image" content="javascript:alert(1)">
         <link rel="icon" href="data:image/png;base64,AAAA">`,
      ),
      '/missing': (_req, res) => {
        res
          .writeHead(404, { 'content-type': 'text/html' })
          .end(page('<p>gone</p>', '<title>Not found</title>'));
      },
    });
    t = await startApp({
      db,
      env: { EGRESS_ALLOWLIST: site.hostPort },
      plans: { free: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const capture = async (key: string, body: Record<string, unknown>) => {
    const res = await postCapture(t, key, body);
    assert.equal(res.status, 201, await res.clone().text());
    return (await res.json()) as { cached: boolean; metadata?: Record<string, unknown> };
  };

  it('reads the page after its redirect, and a cache hit answers the same', async () => {
    const key = await newApiKey(t);
    const first = await capture(key, { url: `${site.origin}/start`, metadata: true });
    assert.deepEqual(first.metadata, {
      title: 'The article',
      description: 'What it is about.',
      final_url: `${site.origin}/article`,
      http_status: 200,
      og: {
        title: 'OG title',
        description: 'OG description',
        image: `${site.origin}/images/card.png`,
      },
      icon_url: `${site.origin}/favicon-32.png`,
    });
    const hit = await capture(key, { url: `${site.origin}/start`, metadata: true });
    assert.equal(hit.cached, true);
    assert.deepEqual(hit.metadata, first.metadata);
    // Without the flag: no field, and its own cache entry.
    const plain = await capture(key, { url: `${site.origin}/start` });
    assert.equal(plain.cached, false);
    assert.equal('metadata' in plain, false);
  });

  it('gives null for what the page lacks, and cuts or drops what is hostile', async () => {
    const key = await newApiKey(t);
    const bare = await capture(key, { url: `${site.origin}/bare`, metadata: true });
    assert.deepEqual(bare.metadata, {
      title: null,
      description: null,
      final_url: `${site.origin}/bare`,
      http_status: 200,
      og: { title: null, description: null, image: null },
      icon_url: null,
    });
    const hostile = await capture(key, { url: `${site.origin}/hostile`, metadata: true });
    assert.equal(hostile.metadata?.title, 'T'.repeat(1_024));
    assert.deepEqual(hostile.metadata?.og, { title: null, description: null, image: null });
    assert.equal(hostile.metadata?.icon_url, null);
    const missing = await capture(key, { url: `${site.origin}/missing`, metadata: true });
    assert.equal(missing.metadata?.http_status, 404);
    assert.equal(missing.metadata?.title, 'Not found');
  });
});
