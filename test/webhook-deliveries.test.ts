/**
 * Webhook deliveries cannot be turned against other accounts (a security review's findings):
 * an account holds at most BOUNDS.jobs.deliveriesInFlightPerAccount sending slots on all nodes
 * together, a resend is refused while the delivery is being sent or waiting and once the
 * account has too many waiting, resends draw on the account's non-capture rate, attempt lists
 * are bounded, and finished records are pruned. On both databases, through the real store and
 * the HTTP surface.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { BOUNDS } from '../src/domain/bounds.ts';
import { describeEachDatabase, signUp, startApp, type TestApp } from './helpers/app.ts';

describeEachDatabase('webhook deliveries: bounds between accounts', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({ db, env: { ASYNC_WORKERS: '0' } });
  });
  after(() => t?.close());

  let n = 0;
  const delivery = async (
    userId: number,
    fields: { status?: string; leaseUntil?: number | null; updatedAt?: number } = {},
  ): Promise<string> => {
    const id = `msg_${String(++n).padStart(24, '0')}`;
    const now = Date.now();
    await t.deps.database.db
      .insertInto('webhook_deliveries')
      .values({
        id,
        user_id: userId,
        job_id: `job_${String(n).padStart(24, '0')}`,
        url: 'http://127.0.0.1:9/hook',
        event_type: 'screenshot.succeeded',
        payload: '{}',
        status: fields.status ?? 'pending',
        next_attempt_at: now - 1_000,
        lease_owner: fields.leaseUntil ? 'someone' : null,
        lease_expires_at: fields.leaseUntil ?? null,
        created_at: now - n,
        updated_at: fields.updatedAt ?? now,
      })
      .execute();
    return id;
  };

  it('gives one account at most its share of sending slots', async () => {
    const a = await signUp(t);
    const b = await signUp(t);
    const mine = [await delivery(a.id), await delivery(a.id), await delivery(a.id)];
    const theirs = await delivery(b.id);
    const store = t.deps.ctx.store.webhooks;
    const claimed: string[] = [];
    for (let i = 0; i < 4; i++) {
      const [d] = await store.claimDue({
        owner: 'node-1',
        now: Date.now(),
        leaseMs: 60_000,
        limit: 1,
        perAccount: BOUNDS.jobs.deliveriesInFlightPerAccount,
      });
      if (d) claimed.push(d.id);
    }
    assert.equal(BOUNDS.jobs.deliveriesInFlightPerAccount, 2);
    assert.deepEqual(
      claimed.sort(),
      [mine[0], mine[1], theirs].sort(),
      "A's third waits while two are sent",
    );
  });

  it('refuses a resend while sending or waiting, and past the account bound', async () => {
    const { id: userId, cookie } = await signUp(t);
    const resend = (id: string) =>
      t.fetch(`/v1/webhooks/deliveries/${id}/resend`, { method: 'POST', cookie });
    const waiting = await delivery(userId);
    const sending = await delivery(userId, { status: 'failed', leaseUntil: Date.now() + 60_000 });
    for (const id of [waiting, sending]) {
      const res = await resend(id);
      assert.equal(res.status, 409);
      assert.equal(
        ((await res.json()) as { error: string }).error,
        'the delivery is already being sent or waiting for its next attempt',
      );
    }
    const done = await delivery(userId, { status: 'delivered' });
    assert.equal((await resend(done)).status, 200, 'a finished one can be sent again');
    // Ten waiting (the one just resent among them): another is refused.
    for (let i = 0; i < BOUNDS.jobs.maxPendingResends - 2; i++) await delivery(userId);
    const failed = await delivery(userId, { status: 'failed' });
    const tooMany = await resend(failed);
    assert.equal(tooMany.status, 409);
    assert.match(
      ((await tooMany.json()) as { error: string }).error,
      /^10 deliveries of this account are already waiting/,
    );
    assert.ok(tooMany.headers.get('x-ratelimit-limit'), 'resends draw on the non-capture rate');
  });

  it('lists the newest attempts only, and prunes finished records', async () => {
    const { id: userId } = await signUp(t);
    const id = await delivery(userId, { status: 'delivered' });
    const at = Date.now() - 100_000;
    await t.deps.database.db
      .insertInto('webhook_attempts')
      .values(
        Array.from({ length: 60 }, (_, i) => ({
          delivery_id: id,
          attempted_at: at + i,
          status_code: 500,
          error: null,
          duration_ms: 1,
        })),
      )
      .execute();
    const list = await t.deps.ctx.store.webhooks.attempts(userId, id, BOUNDS.jobs.attemptsListed);
    assert.equal(list?.length, 50);
    assert.equal(list?.[0]?.attemptedAt, at + 10, 'the newest 50, oldest first');
    const old = await delivery(userId, {
      status: 'failed',
      updatedAt: Date.now() - BOUNDS.jobs.recordRetentionMs - 1_000,
    });
    const pending = await delivery(userId, {
      updatedAt: Date.now() - BOUNDS.jobs.recordRetentionMs - 1_000,
    });
    assert.ok(
      (await t.deps.ctx.store.webhooks.prune(Date.now() - BOUNDS.jobs.recordRetentionMs)) >= 1,
    );
    const left = await t.deps.database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', 'in', [old, pending])
      .execute();
    assert.deepEqual(
      left.map((r) => r.id),
      [pending],
      'a delivery still waiting is kept',
    );
  });
});
