/**
 * The embedded mode's queue is its SQLite file: a job queued by a node that then stops (its
 * workers off, as on an API-only node) is run by the next node started on the same data
 * directory, with its webhook.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { startWebhookReceiver, type WebhookReceiver, waitForJob } from '../helpers/webhooks.ts';

describe('async captures: the embedded queue survives a restart', () => {
  let site: FixtureSite;
  let hooks: WebhookReceiver;
  let dataDir: string;
  const apps: TestApp[] = [];
  before(async () => {
    site = await startSite({ '/': page('<h1>after the restart</h1>') });
    hooks = await startWebhookReceiver();
    dataDir = await longDataDir('restart');
  });
  after(async () => {
    for (const app of apps) await app.close().catch(() => {});
    await site?.close();
    await hooks?.close();
    await removeDataDir(dataDir);
  });

  const node = async (workers: string) => {
    const app = await startApp({
      db: 'sqlite',
      env: {
        DATA_DIR: dataDir,
        ASYNC_WORKERS: workers,
        EGRESS_ALLOWLIST: `${site.hostPort},${hooks.hostPort}`,
      },
    });
    apps.push(app);
    return app;
  };

  it('runs after the restart what was queued before it', async () => {
    const first = await node('0');
    const key = await newApiKey(first, { plan: 'pro' });
    const res = await postCapture(first, key, {
      url: `${site.origin}/`,
      async: true,
      webhook_url: hooks.url,
    });
    assert.equal(res.status, 202);
    const job = (await res.json()) as { id: string };
    await first.close();

    const second = await node(String(1));
    const done = await waitForJob(`${second.url}/v1/screenshots/${job.id}`, key);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const [hook] = await hooks.waitFor(1);
    assert.equal((JSON.parse(hook?.body ?? '{}') as { data: { id: string } }).data.id, job.id);
  });
});
