/**
 * The 504 of POST /v1/screenshots as a client reads it (docs/errors.md, "Shapes"): `phase` and
 * `pending_requests` beside `error` and `code`, never a query string, and no unit spent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RENDER_PHASES } from '../../src/domain/captures/renderer.ts';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';

describe('a capture past its deadline explains itself', () => {
  let t: TestApp;
  let site: FixtureSite;
  let key: string;

  before(async () => {
    site = await startSite({
      '/slow.js': () => new Promise<void>(() => {}),
      '/page': page('<h1>waits for a script</h1><script src="/slow.js?api_key=hunter2"></script>'),
    });
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_TIMEOUT_MS: '4000' },
    });
    key = await newApiKey(t);
  });
  after(async () => {
    await t?.close();
    await site?.close();
  });

  const used = async () =>
    (
      (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
        used: number;
      }
    ).used;

  it('504 with the phase and the pending script by origin and path', async () => {
    const res = await t.fetch('/v1/screenshots', {
      method: 'POST',
      headers: { 'x-api-key': key },
      json: { url: `${site.origin}/page`, width: 400, height: 300 },
    });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 504, JSON.stringify(body));
    assert.deepEqual(Object.keys(body).sort(), ['code', 'error', 'pending_requests', 'phase']);
    assert.equal(body.code, 'render_timeout');
    assert.ok(RENDER_PHASES.includes(body.phase as never));
    // The script blocks the parser: the document has answered, its load event never comes.
    assert.equal(body.phase, 'load');
    assert.deepEqual(body.pending_requests, [`${site.origin}/slow.js`]);
    assert.match(String(body.error), /phase: load.*1 request still loading/);
    assert.doesNotMatch(JSON.stringify(body), /hunter2|api_key/);
    assert.equal(await used(), 0);
  });
});
