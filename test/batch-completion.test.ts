/**
 * How a batch completes in the database (adapters/db/job-store.ts `finish`, batch-store.ts),
 * on both databases: every job of a batch finished at the same moment by a different worker
 * (on PostgreSQL over separate pool connections, as several nodes would), and the batch is
 * completed, with its `batch.completed` delivery written, exactly once, with the right counts;
 * a job finished by a worker that lost it counts nothing; a batch over the account's bound of
 * open jobs is written not at all.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { CompletedBatch, NewJob } from '../src/domain/store.ts';
import { describeEachDatabase, signUp, startApp, type TestApp } from './helpers/app.ts';

describeEachDatabase('batch completion', (db) => {
  let t: TestApp;
  before(async () => {
    // No workers: the test is the only one taking jobs.
    t = await startApp({ db, env: { ASYNC_WORKERS: '0' } });
  });
  after(() => t?.close());

  let n = 0;
  const newJob = (userId: number): NewJob => ({
    id: `job_${String(++n).padStart(24, '0')}`,
    userId,
    keyId: null,
    input: { url: 'http://127.0.0.1:9/' },
    webhookUrl: null,
    period: '2026-11',
    day: '2026-11-28',
    quota: { used: 1, limit: 100 },
    createdAt: Date.now(),
  });
  let b = 0;
  const batchId = () => `bat_${String(++b).padStart(24, '0')}`;

  it('completes once when every job ends at the same moment on another worker', async () => {
    const { id: userId } = await signUp(t);
    const { batches, jobs } = t.deps.ctx.store;
    const id = batchId();
    const size = 12;
    const created = await batches.create(
      { id, userId, webhookUrl: 'http://127.0.0.1:9/hook', createdAt: Date.now() },
      Array.from({ length: size }, () => newJob(userId)),
      50,
    );
    assert.ok(Array.isArray(created));
    const now = Date.now();
    for (const [i, job] of created.entries()) {
      assert.equal(
        (await jobs.claim({ owner: `w${i}`, now, leaseMs: 30_000, id: job.id }))?.batchId,
        id,
      );
    }
    const completions: CompletedBatch[] = [];
    const results = await Promise.all(
      created.map((job, i) =>
        jobs.finish(
          { id: job.id, owner: `w${i}` },
          {
            now: Date.now(),
            outcome:
              i % 3 === 0
                ? { status: 'failed', error: 'no', code: 'target_error' }
                : { status: 'succeeded', result: {} },
            delivery: null,
            batchCompleted: (batch) => {
              completions.push(batch);
              return {
                id: `msg_batch_${id}`,
                userId,
                jobId: batch.id,
                url: 'http://127.0.0.1:9/hook',
                eventType: 'batch.completed',
                payload: JSON.stringify(batch),
              };
            },
          },
        ),
      ),
    );
    assert.deepEqual(results, Array(size).fill(true));
    assert.equal(completions.length, 1, 'completed by exactly one transaction');
    assert.deepEqual(
      [completions[0]?.id, completions[0]?.succeeded, completions[0]?.failed],
      [id, 8, 4],
    );
    const deliveries = await t.deps.database.db
      .selectFrom('webhook_deliveries')
      .select(['event_type', 'job_id'])
      .where('user_id', '=', userId)
      .execute();
    assert.deepEqual(
      deliveries.map((d) => ({ ...d })),
      [{ event_type: 'batch.completed', job_id: id }],
    );
    const found = await batches.get(userId, id);
    assert.equal(found?.batch.succeeded, 8);
    assert.equal(found?.batch.failed, 4);
    assert.notEqual(found?.batch.completedAt, null);
    assert.deepEqual(
      found?.jobs.map((j) => j.id),
      created.map((j) => j.id),
      "listed in the requests' order",
    );
    assert.equal(await batches.get(userId + 1_000_000, id), null, "another account's: none");
  });

  it('counts nothing for a worker that lost its job, and nothing twice', async () => {
    const { id: userId } = await signUp(t);
    const { batches, jobs } = t.deps.ctx.store;
    const id = batchId();
    const created = await batches.create(
      { id, userId, webhookUrl: null, createdAt: Date.now() },
      [newJob(userId), newJob(userId)],
      50,
    );
    assert.ok(Array.isArray(created));
    const [first, second] = created as [(typeof created)[0], (typeof created)[0]];
    const now = Date.now();
    await jobs.claim({ owner: 'old', now, leaseMs: 1_000, id: first.id });
    await jobs.claim({ owner: 'new', now: now + 2_000, leaseMs: 30_000, id: first.id }); // taken over
    await jobs.claim({ owner: 'w2', now, leaseMs: 30_000, id: second.id });
    let completions = 0;
    const done = () => {
      completions++;
      return null;
    };
    const ok = { status: 'succeeded', result: {} } as const;
    assert.equal(
      await jobs.finish(
        { id: first.id, owner: 'old' },
        { now, outcome: ok, delivery: null, batchCompleted: done },
      ),
      false,
    );
    assert.equal(
      await jobs.finish(
        { id: first.id, owner: 'new' },
        { now, outcome: ok, delivery: null, batchCompleted: done },
      ),
      true,
    );
    assert.equal(
      await jobs.finish(
        { id: first.id, owner: 'new' },
        { now, outcome: ok, delivery: null, batchCompleted: done },
      ),
      false,
      'once',
    );
    assert.equal(completions, 0, 'one of two counted');
    assert.equal(
      await jobs.finish(
        { id: second.id, owner: 'w2' },
        { now, outcome: ok, delivery: null, batchCompleted: done },
      ),
      true,
    );
    assert.equal(completions, 1);
    const found = await batches.get(userId, id);
    assert.deepEqual([found?.batch.succeeded, found?.batch.failed], [2, 0]);
  });

  it('writes nothing when the batch would pass the bound of open jobs', async () => {
    const { id: userId } = await signUp(t);
    const { batches } = t.deps.ctx.store;
    const ok = await batches.create(
      { id: batchId(), userId, webhookUrl: null, createdAt: Date.now() },
      [newJob(userId), newJob(userId), newJob(userId)],
      5,
    );
    assert.ok(Array.isArray(ok));
    const id = batchId();
    const refused = await batches.create(
      { id, userId, webhookUrl: null, createdAt: Date.now() },
      [newJob(userId), newJob(userId), newJob(userId)],
      5,
    );
    assert.equal(refused, 'limit_reached');
    assert.equal(await batches.get(userId, id), null);
    const open = await t.deps.database.db
      .selectFrom('capture_jobs')
      .select('id')
      .where('user_id', '=', userId)
      .execute();
    assert.equal(open.length, 3);
  });
});
