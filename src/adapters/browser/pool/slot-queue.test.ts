import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../../../domain/errors.ts';
import { type SlotClient, SlotQueue } from './slot-queue.ts';

const far = () => Date.now() + 60_000;
const client = (id: string, maxConcurrent = 100): SlotClient => ({ id, maxConcurrent });

function filled(slots: string[], maxQueued: number, minStartMs?: () => number): SlotQueue<string> {
  const queue = new SlotQueue<string>({ maxQueued, ...(minStartMs ? { minStartMs } : {}) });
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

  describe('fair share across clients', () => {
    it('a freed slot goes to waiting clients in turn, first come first served within each', async () => {
      const queue = filled(['a', 'b'], 10);
      const order: string[] = [];
      let lastSlot = '';
      const acquireAs = (id: string, name: string) =>
        queue.acquire(far(), undefined, client(id)).then((slot) => {
          order.push(name);
          lastSlot = slot;
        });
      // Client A takes both slots and queues three more; then B and C queue one each.
      const a1 = await queue.acquire(far(), undefined, client('A'));
      const a2 = await queue.acquire(far(), undefined, client('A'));
      const waiting = [
        acquireAs('A', 'A3'),
        acquireAs('A', 'A4'),
        acquireAs('A', 'A5'),
        acquireAs('B', 'B1'),
        acquireAs('C', 'C1'),
      ];
      assert.equal(queue.queued, 5);
      lastSlot = a1;
      // Each capture served frees its slot again before the next one is handed out.
      for (let i = 0; i < 5; i++) {
        queue.release(lastSlot);
        await sleep(0);
      }
      await Promise.all(waiting);
      // A was first in the rotation, then went to the back, behind B and C.
      assert.deepEqual(order, ['A3', 'B1', 'C1', 'A4', 'A5']);
      queue.release(lastSlot);
      queue.release(a2);
      assert.equal(queue.idle, 2);
      assert.equal(queue.queued, 0);
    });

    it('a client at its limit waits while a free slot goes to another client', async () => {
      const queue = filled(['a', 'b', 'c'], 10);
      const free = client('free', 1);
      const first = await queue.acquire(far(), undefined, free);
      let second: string | undefined;
      const waiting = queue.acquire(far(), undefined, free).then((slot) => {
        second = slot;
        return slot;
      });
      await sleep(0);
      assert.equal(second, undefined, 'the second capture waits for the first');
      assert.equal(queue.queued, 1);
      assert.equal(queue.idle, 2);
      // Other clients still take the free slots at once.
      assert.equal(await queue.acquire(far(), undefined, client('other')), 'b');
      assert.equal(queue.heldBy('free'), 1);
      queue.release(first);
      assert.equal(await waiting, first);
      assert.equal(queue.heldBy('free'), 1);
      assert.equal(queue.idle, 1);
    });

    it('a limit of 4 (Pro): the fifth capture waits for one of the first four', async () => {
      const queue = filled(['1', '2', '3', '4', '5', '6'], 10);
      const pro = client('user:7', 4);
      const held = await Promise.all([1, 2, 3, 4].map(() => queue.acquire(far(), undefined, pro)));
      let fifth: string | undefined;
      const waiting = queue.acquire(far(), undefined, pro).then((slot) => {
        fifth = slot;
      });
      await sleep(0);
      assert.equal(fifth, undefined);
      assert.equal(queue.idle, 2, 'slots stay free for other clients');
      queue.release(held[2] as string);
      await waiting;
      assert.equal(fifth, held[2]);
      assert.equal(queue.heldBy('user:7'), 4);
    });

    it('a slot freed while every waiting client is at its limit stays free', async () => {
      const queue = filled(['a', 'b'], 10);
      const one = client('one', 1);
      const first = await queue.acquire(far(), undefined, one);
      const other = await queue.acquire(far(), undefined, client('other'));
      const waiting = queue.acquire(far(), undefined, one);
      queue.release(other);
      assert.equal(queue.idle, 1);
      assert.equal(queue.queued, 1);
      queue.release(first);
      assert.equal(await waiting, first);
    });

    it('a waiter at its limit still leaves at its deadline; the wait list bounds all clients', async () => {
      const queue = filled(['a', 'b'], 4);
      const one = client('one', 1);
      await queue.acquire(far(), undefined, one);
      await assert.rejects(queue.acquire(Date.now() + 50, undefined, one), {
        code: 'render_timeout',
      });
      assert.equal(queue.queued, 0);
      assert.equal(queue.idle, 1);
      const w1 = queue.acquire(far(), undefined, one);
      const w2 = queue.acquire(far(), undefined, one);
      await assert.rejects(queue.acquire(far(), undefined, one), (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'overloaded');
        assert.deepEqual(err.headers, { 'Retry-After': '5' });
        return true;
      });
      queue.rejectAll(new Error('closing'));
      await assert.rejects(w1, /closing/);
      await assert.rejects(w2, /closing/);
    });

    it('one client waits in at most half of the list; others still find room', async () => {
      const queue = filled(['a'], 6);
      const burst = client('burst', 1);
      await queue.acquire(far(), undefined, burst);
      const waiting = [1, 2, 3].map(() => queue.acquire(far(), undefined, burst));
      await assert.rejects(queue.acquire(far(), undefined, burst), { code: 'overloaded' });
      assert.equal(queue.queued, 3);
      const others = [client('x'), client('y'), client('z')].map((c) =>
        queue.acquire(far(), undefined, c),
      );
      assert.equal(queue.queued, 6);
      // The list is full: a newcomer takes the place of the burst's newest waiter.
      const late = queue.acquire(far(), undefined, client('late'));
      await assert.rejects(waiting[2] as Promise<string>, { code: 'overloaded' });
      assert.equal(queue.queued, 6);
      queue.rejectAll(new Error('closing'));
      for (const w of [...waiting.slice(0, 2), ...others, late]) {
        await assert.rejects(w, /closing/);
      }
    });
  });

  describe('a full list under a flood', () => {
    it('a client with nothing waiting takes the place of the newest waiter of the client with the most waiting', async () => {
      const queue = filled(['a'], 4);
      await queue.acquire(far(), undefined, client('x', 1));
      const outcomes: string[] = [];
      const watch = (name: string, p: Promise<string>) =>
        p.then(
          () => outcomes.push(`${name}:ok`),
          (err: AppError) => outcomes.push(`${name}:${err.code}`),
        );
      const a = [1, 2].map((i) => watch(`A${i}`, queue.acquire(far(), undefined, client('A', 1))));
      const b = [1].map((i) => watch(`B${i}`, queue.acquire(far(), undefined, client('B', 1))));
      const c = [1].map((i) => watch(`C${i}`, queue.acquire(far(), undefined, client('C', 1))));
      assert.equal(queue.queued, 4);
      const light = watch('L1', queue.acquire(far(), undefined, client('L', 1)));
      await sleep(0);
      assert.deepEqual(outcomes, ['A2:overloaded'], "A's newest waiter made room");
      assert.equal(queue.queued, 4);
      // A client that already waits gets no such place.
      await assert.rejects(queue.acquire(far(), undefined, client('L', 1)), {
        code: 'overloaded',
      });
      queue.rejectAll(new AppError('overloaded', 'closing'));
      await Promise.all([...a, ...b, ...c, light]);
    });

    it('the refused waiter answers 503 with Retry-After; the newcomer is served in turn', async () => {
      const queue = filled(['a'], 2);
      const first = await queue.acquire(far(), undefined, client('A', 1));
      const a1 = queue.acquire(far(), undefined, client('A', 1));
      const a2 = queue.acquire(far(), undefined, client('A', 1));
      const light = queue.acquire(far(), undefined, client('L', 1));
      await assert.rejects(a2, (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'overloaded');
        assert.deepEqual(err.headers, { 'Retry-After': '5' });
        return true;
      });
      queue.release(first);
      assert.equal(await a1, 'a');
      queue.release('a');
      assert.equal(await light, 'a');
    });

    it('among clients with one waiter each, the newest waiter of all makes room', async () => {
      const queue = filled(['a'], 3);
      await queue.acquire(far(), undefined, client('x', 1));
      const light = queue.acquire(far(), undefined, client('L', 1));
      const a = queue.acquire(far(), undefined, client('A', 1));
      const b = queue.acquire(far(), undefined, client('B', 1));
      // Flooders with nothing waiting keep arriving: each replaces the newest, never L.
      const c = queue.acquire(far(), undefined, client('C', 1));
      await assert.rejects(b, { code: 'overloaded' });
      const d = queue.acquire(far(), undefined, client('D', 1));
      await assert.rejects(c, { code: 'overloaded' });
      assert.equal(queue.queued, 3);
      queue.release('a');
      assert.equal(await light, 'a');
      queue.rejectAll(new Error('closing'));
      await assert.rejects(a, /closing/);
      await assert.rejects(d, /closing/);
    });
  });

  describe('a full list, one waiter each', () => {
    it('the client that asked for the most lately makes room, not the newest waiter', async () => {
      const queue = filled(['a'], 3);
      await queue.acquire(far(), undefined, client('x', 1));
      const outcomes = new Map<string, string>();
      const watch = (name: string, p: Promise<string>) =>
        p.then(
          () => outcomes.set(name, 'ok'),
          (err: Error) => outcomes.set(name, err.message),
        );
      // Two flooders wait and keep asking (refused: one waiter each at most in a list of 3).
      const waiting = [watch('A', queue.acquire(far(), undefined, client('A', 1)))];
      waiting.push(watch('B', queue.acquire(far(), undefined, client('B', 1))));
      for (let i = 0; i < 5; i++) {
        for (const id of ['A', 'B']) {
          await assert.rejects(queue.acquire(far(), undefined, client(id, 1)));
        }
      }
      // The light client's one capture takes the last place: it is the newest waiter.
      waiting.push(watch('L', queue.acquire(far(), undefined, client('L', 1))));
      // A new flooder with nothing waiting takes the place of a flooder's waiter, not L's.
      waiting.push(watch('C', queue.acquire(far(), undefined, client('C', 1))));
      await sleep(0);
      assert.equal(queue.queued, 3);
      assert.equal(outcomes.get('L'), undefined, 'L still waits');
      assert.equal([outcomes.get('A'), outcomes.get('B')].filter(Boolean).length, 1);
      queue.rejectAll(new Error('closing'));
      await Promise.all(waiting);
      assert.equal(outcomes.get('L'), 'closing');
    });
  });

  describe('no render starts with less deadline left than a typical render', () => {
    it('a capture that would wait with too little time left is refused at once', async () => {
      const queue = filled(['a'], 2, () => 1_000);
      await queue.acquire(far(), undefined, client('x', 1));
      const started = Date.now();
      await assert.rejects(
        queue.acquire(Date.now() + 500, undefined, client('A', 1)),
        (err: unknown) => {
          assert.ok(err instanceof AppError);
          assert.equal(err.code, 'overloaded');
          assert.deepEqual(err.headers, { 'Retry-After': '5' });
          return true;
        },
      );
      assert.ok(Date.now() - started < 400, 'refused on arrival, not at its deadline');
      assert.equal(queue.queued, 0);
    });

    it('a capture that finds a free slot starts, whatever its deadline', async () => {
      const queue = filled(['a'], 2, () => 1_000);
      assert.equal(await queue.acquire(Date.now() + 500), 'a');
    });

    it('a waiter whose time ran short leaves when its turn comes; the slot goes to the next', async () => {
      let typical = 0;
      const queue = filled(['a'], 4, () => typical);
      await queue.acquire(far(), undefined, client('x', 1));
      const short = queue.acquire(Date.now() + 2_000, undefined, client('A', 1));
      const long = queue.acquire(far(), undefined, client('B', 1));
      // Renders got slower while they waited: 2 s left is no longer enough.
      typical = 3_000;
      const started = Date.now();
      queue.release('a');
      await assert.rejects(short, { code: 'overloaded' });
      assert.ok(Date.now() - started < 1_000, 'refused at once, not at its deadline');
      assert.equal(await long, 'a');
      assert.equal(queue.queued, 0);
    });

    it('no typical time yet (0): nothing is refused for time', async () => {
      const queue = filled(['a'], 1, () => 0);
      assert.equal(await queue.acquire(Date.now() + 10), 'a');
    });
  });
});
