/**
 * Start order of the real process (docs/deployment.md, "Start-up"): main.ts launches Chromium
 * before it loads the rest of the service, yet /readyz stays 503 until the browser is up, what
 * the renderer logs before the app's logger exists reaches the log, and a capture sent while
 * the browser is still missing is answered once it is there.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { nodeAccount } from '../helpers/accounts.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { type NodeProcess, startNode } from '../helpers/node-process.ts';
import { chromiumFailingUntil } from './helpers.ts';

const WAIT_MS = 90_000;

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + WAIT_MS;
  while (!(await probe())) {
    assert.ok(Date.now() < end, `${what}: not within ${WAIT_MS} ms`);
    await sleep(100);
  }
}

describe('start order', () => {
  let site: FixtureSite;
  let dir: string;
  let node: NodeProcess | undefined;
  before(async () => {
    site = await startSite({ '/': page('<p>started</p>') });
    dir = await longDataDir('start-order');
  });
  after(async () => {
    await node?.stop();
    await site?.close();
    await removeDataDir(dir);
  });

  it('readyz is 503 until Chromium is up; early log lines are kept; then captures', async () => {
    const flag = join(dir, 'works');
    // Refuses to start (at once, long before the app is built) until the flag file exists.
    const script = chromiumFailingUntil(dir, flag, 'fake-chromium: not yet');
    node = await startNode(
      'start-order',
      { EGRESS_ALLOWLIST: site.hostPort, CHROME_PATH: script },
      { ready: false },
    );
    const service = node;
    const status = async (path: string) => {
      const res = await service.fetch(path);
      await res.body?.cancel();
      return res.status;
    };
    assert.equal(await status('/healthz'), 200);
    assert.equal(await status('/readyz'), 503, 'not ready without a browser');
    await until('the failed launch in the log', async () =>
      service.output().includes('chromium could not be started'),
    );
    assert.match(service.output(), /fake-chromium: not yet/);
    assert.equal(await status('/readyz'), 503);

    const { key } = await nodeAccount(service, { key: true });

    writeFileSync(flag, '');
    await until('ready once Chromium starts', async () => (await status('/readyz')) === 200);
    let answered = 0;
    await until('a capture', async () => {
      const res = await service.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': key },
        json: { url: `${site.origin}/?n=${++answered}` },
      });
      await res.body?.cancel();
      // A capture during the first seconds after the relaunch may still be refused (503).
      assert.ok(res.status === 201 || res.status === 503, `capture: ${res.status}`);
      return res.status === 201;
    });
  });
});
