/**
 * Chromium asks no one anything of its own. Started with our flags (chromium-flags.ts), it
 * still contacted Google within seconds of launch, whatever page it loaded: network time
 * (`clients2.google.com/time/1/current`), an update check for the optimization guide's
 * on-device models manifest (`update.googleapis.com/service/update2/json`, and again a minute
 * later) and the Google accounts in its cookie jar (`accounts.google.com/ListAccounts`, retried
 * at 5, 8, 16, 40 and 114 s). In production those went out through the egress proxy, which
 * lets public addresses through; a self-hosted service must not phone anyone.
 *
 * Here the corpus server is Chromium's proxy: it refuses every request for another host and
 * records it (`escaped`), so none leaves 127.0.0.1 and any that Chromium tries is seen. The
 * renderer captures a loopback page, then the test watches until WATCH_MS after the launch,
 * long enough for the launch burst and the retries up to 40 s (the whole test stays under a
 * minute; the update check at ~60 s and the on-device model service, started ~3 minutes in,
 * were checked by hand over 210 s: nothing). Not one request for another host may arrive.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type CorpusServer, startCorpusServer } from './corpus/server.ts';
import { startRenderer, type TestRenderer } from './helpers.ts';

/** How long after the launch Chromium is watched. */
const WATCH_MS = 45_000;

describe("Chromium's own background requests", () => {
  let server: CorpusServer;
  let t: TestRenderer;
  let launchedAt = 0;

  before(async () => {
    server = await startCorpusServer(['aos']);
    launchedAt = Date.now();
    t = await startRenderer({ proxyUrl: server.proxyUrl });
  });

  after(async () => {
    await t?.close();
    await server?.close();
  });

  it('sends none, at launch, during a capture or in the 45 s after launch', async () => {
    const result = await t.render({ url: server.url('aos', 'demo/simple.html') }, 30_000);
    assert.ok(result.image.length > 0);
    assert.ok((server.served.get('aos') ?? 0) > 0, 'the page came from the corpus server');

    await new Promise((done) => setTimeout(done, Math.max(0, launchedAt + WATCH_MS - Date.now())));
    assert.deepEqual(
      server.escaped,
      [],
      `Chromium asked for other hosts by itself:\n${JSON.stringify(server.escaped, null, 2)}`,
    );
  });
});
