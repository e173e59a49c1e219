/**
 * How workers take async jobs from the database (adapters/db/job-store.ts), on both databases:
 * one worker per job, accounts taking turns (the account with the fewest jobs rendering goes
 * first, so one account's backlog does not hold every worker), a requeued job only once it is
 * due, and a dead worker's job once its lease has run out.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { describeEachDatabase, signUp, startApp, type TestApp } from './helpers/app.ts';

describeEachDatabase('job claims', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db, env: { ASYNC_WORKERS: '0' } });
  });
  after(() => t?.close());

  let n = 0;
  const queue = async (userId: number, createdAt: number): Promise<string> => {
    const id = `job_${String(++n).padStart(24, '0')}`;
    const job = await t.deps.ctx.store.jobs.createWithinLimit(
      {
        id,
        userId,
        keyId: null,
        input: { url: 'http://127.0.0.1:9/' },
        webhookUrl: null,
        period: '2026-11',
        day: '2026-11-26',
        quota: { used: 1, limit: 100 },
        createdAt,
      },
      100,
    );
    assert.notEqual(job, 'limit_reached');
    return id;
  };

  it('lets accounts take turns, and hands each job to one worker', async () => {
    const a = await signUp(t);
    const b = await signUp(t);
    const at = Date.now() - 60_000;
    const [a1, a2, a3] = [
      await queue(a.id, at),
      await queue(a.id, at + 1),
      await queue(a.id, at + 2),
    ];
    const b1 = await queue(b.id, at + 3);
    const jobs = t.deps.ctx.store.jobs;
    const now = Date.now();
    const taken = [];
    for (let i = 0; i < 4; i++)
      taken.push((await jobs.claim({ owner: `w${i}`, now, leaseMs: 30_000 }))?.id);
    assert.deepEqual(taken, [a1, b1, a2, a3], "B's job goes before A's second");
    assert.equal(
      await jobs.claim({ owner: 'w9', now, leaseMs: 30_000 }),
      null,
      'nothing is taken twice',
    );
  });

  it('takes a requeued job only when due, and a dead worker\u2019s only after its lease', async () => {
    const { id: userId } = await signUp(t);
    const jobs = t.deps.ctx.store.jobs;
    const id = await queue(userId, Date.now());
    const now = Date.now();
    const first = await jobs.claim({ owner: 'w1', now, leaseMs: 30_000, id });
    assert.equal(first?.attempts, 1);
    assert.equal(
      await jobs.claim({ owner: 'w2', now: now + 29_000, leaseMs: 30_000, id }),
      null,
      'the lease holds',
    );
    const takenOver = await jobs.claim({ owner: 'w2', now: now + 31_000, leaseMs: 30_000, id });
    assert.equal(takenOver?.attempts, 2, 'taken over once the lease ran out');
    assert.equal(
      await jobs.renew({ id, owner: 'w1' }, now + 60_000),
      false,
      'the first worker lost it',
    );
    assert.equal(
      await jobs.requeue({ id, owner: 'w2' }, { now: now + 32_000, availableAt: now + 40_000 }),
      true,
    );
    assert.equal(
      await jobs.claim({ owner: 'w3', now: now + 39_000, leaseMs: 30_000, id }),
      null,
      'not due yet',
    );
    assert.equal(
      (await jobs.claim({ owner: 'w3', now: now + 40_000, leaseMs: 30_000, id }))?.attempts,
      3,
    );
  });

  it('a job released by a stopping worker is taken at once, its attempt uncounted if it never ran', async () => {
    const { id: userId } = await signUp(t);
    const jobs = t.deps.ctx.store.jobs;
    const id = await queue(userId, Date.now());
    const now = Date.now();
    assert.equal((await jobs.claim({ owner: 'w1', now, leaseMs: 30_000, id }))?.attempts, 1);
    assert.equal(
      await jobs.release({ id, owner: 'w2' }, { now, ran: false }),
      false,
      'only its holder lets go',
    );
    assert.equal(await jobs.release({ id, owner: 'w1' }, { now, ran: false }), true);
    // No lease to wait for: another worker takes it now, as its first attempt.
    assert.equal((await jobs.claim({ owner: 'w2', now, leaseMs: 30_000, id }))?.attempts, 1);
    assert.equal(await jobs.release({ id, owner: 'w2' }, { now, ran: true }), true);
    assert.equal(
      (await jobs.claim({ owner: 'w3', now, leaseMs: 30_000, id }))?.attempts,
      2,
      'a run counts',
    );
  });
});
