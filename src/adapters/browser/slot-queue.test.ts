import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../domain/errors.ts';
import { SlotQueue } from './slot-queue.ts';

const far = () => Date.now() + 60_000;

function filled(slots: string[], maxQueued: number): SlotQueue<string> {
  const queue = new SlotQueue<string>(maxQueued);
  for (const slot of slots) queue.release(slot);
  return queue;
}

describe('SlotQueue', () => {
  it('hands out free slots at once, in order', async () => {
    const queue = filled(['a', 'b'], 0);
    assert.equal(await queue.acquire(far()), 'a');
    assert.equal(await queue.acquire(far()), 'b');
    assert.equal(queue.idle, 0);
  });

  it('queues waiters first come, first served', async () => {
    const queue = filled(['a'], 3);
    await queue.acquire(far());
    const order: string[] = [];
    const waiters = ['1', '2', '3'].map((name) =>
      queue.acquire(far()).then((slot) => {
        order.push(`${name}:${slot}`);
        queue.release(slot);
      }),
    );
    assert.equal(queue.queued, 3);
    queue.release('a');
    await Promise.all(waiters);
    assert.deepEqual(order, ['1:a', '2:a', '3:a']);
    assert.equal(queue.queued, 0);
    assert.equal(queue.idle, 1);
  });

  it('refuses beyond the queue size with overloaded and Retry-After', async () => {
    const queue = filled(['a'], 1);
    await queue.acquire(far());
    const waiting = queue.acquire(far());
    await assert.rejects(queue.acquire(far()), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'overloaded');
      assert.deepEqual(err.headers, { 'Retry-After': '5' });
      return true;
    });
    queue.release('a');
    assert.equal(await waiting, 'a');
  });

  it('a queue size of 0 refuses as soon as every slot is taken', async () => {
    const queue = filled(['a'], 0);
    await queue.acquire(far());
    await assert.rejects(queue.acquire(far()), { code: 'overloaded' });
  });

  it('a waiter past its deadline leaves with render_timeout', async () => {
    const queue = filled(['a'], 2);
    await queue.acquire(far());
    const started = Date.now();
    await assert.rejects(queue.acquire(Date.now() + 50), { code: 'render_timeout' });
    assert.ok(Date.now() - started >= 45);
    assert.equal(queue.queued, 0);
    queue.release('a');
    assert.equal(queue.idle, 1, 'the released slot is not given to the departed waiter');
  });

  it('a deadline already past is render_timeout even with a free slot', async () => {
    const queue = filled(['a'], 1);
    await assert.rejects(queue.acquire(Date.now() - 1), { code: 'render_timeout' });
    assert.equal(queue.idle, 1);
  });

  it('an aborted waiter leaves with the signal reason', async () => {
    const queue = filled(['a'], 2);
    await queue.acquire(far());
    const controller = new AbortController();
    const waiting = queue.acquire(far(), controller.signal);
    const after = queue.acquire(far());
    const reason = new Error('revoked');
    controller.abort(reason);
    await assert.rejects(waiting, (err) => err === reason);
    queue.release('a');
    assert.equal(await after, 'a');
  });

  it('an already aborted signal never takes a slot', async () => {
    const queue = filled(['a'], 1);
    const controller = new AbortController();
    controller.abort(new Error('early'));
    await assert.rejects(queue.acquire(far(), controller.signal), /early/);
    assert.equal(queue.idle, 1);
  });

  it('takeIdle empties the free list; rejectAll fails every waiter', async () => {
    const queue = filled(['a', 'b'], 2);
    assert.deepEqual(queue.takeIdle(), ['a', 'b']);
    const one = queue.acquire(far());
    const two = queue.acquire(far());
    queue.rejectAll(new Error('closing'));
    await assert.rejects(one, /closing/);
    await assert.rejects(two, /closing/);
    assert.equal(queue.queued, 0);
    await sleep(0);
  });
});
