/**
 * An async capture whose attempt fails in a way that passes by itself (here the render queue
 * is full: 503 overloaded) goes back to the queue and succeeds on a later attempt, holding
 * its one quota unit throughout; a synchronous capture in the same state is simply a 503.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newApiKey } from '../helpers/accounts.ts';
import { postCapture, startApp, type TestApp } from '../helpers/app.ts';
import { type FixtureSite, page, sleep, startSite } from '../helpers/fixtures.ts';
import { waitForJob } from '../helpers/webhooks.ts';

describe('async captures: retryable failures', () => {
  let t: TestApp;
  let site: FixtureSite;
  const held: Array<() => void> = [];
  before(async () => {
    site = await startSite({
      '/': page('<h1>later</h1>'),
      '/hold': (_req, res) =>
        new Promise<void>((resolve) => {
          held.push(() => {
            res.writeHead(200, { 'content-type': 'text/html' }).end(page('<p>held</p>'));
            resolve();
          });
        }),
    });
    // One render slot and no queue: while /hold renders, any other render is refused.
    t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '1', RENDER_QUEUE: '0' },
      plans: { pro: { rate_per_minute: 1000 } },
    });
  });
  after(async () => {
    for (const answer of held.splice(0)) answer();
    await t?.close();
    await site?.close();
  });

  it('tries a job again after a full render queue, and it succeeds', async () => {
    const key = await newApiKey(t, { plan: 'pro' });
    const hold = postCapture(t, key, { url: `${site.origin}/hold` });
    for (let i = 0; i < 100 && held.length === 0; i++) await sleep(50);
    const sync = await postCapture(t, key, { url: `${site.origin}/` });
    assert.equal(sync.status, 503, 'the same state refuses a synchronous capture');
    const queued = (await (
      await postCapture(t, key, { url: `${site.origin}/`, async: true })
    ).json()) as { id: string; status_url: string };
    // Its first attempt is refused and it goes back to the queue, not to failed. It makes
    // that attempt once it has waited its bound for the synchronous render to end
    // (BOUNDS.jobs.foregroundMaxWaitMs), since /hold never does meanwhile.
    let attempts = 0;
    for (let i = 0; i < 600 && attempts === 0; i++) {
      await sleep(50);
      const [row] = await t.deps.database.db
        .selectFrom('capture_jobs')
        .select(['status', 'attempts'])
        .where('id', '=', queued.id)
        .execute();
      if (row && row.status === 'queued' && Number(row.attempts) === 1) attempts = 1;
    }
    assert.equal(attempts, 1, 'requeued after its first attempt');
    for (const answer of held.splice(0)) answer();
    assert.equal((await hold).status, 201);
    const done = await waitForJob(queued.status_url, key);
    assert.equal(done.status, 'succeeded', JSON.stringify(done));
    const usage = (await (
      await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })
    ).json()) as {
      used: number;
    };
    assert.equal(usage.used, 2, 'the held capture and the job: one unit each, none twice');
  });
});
