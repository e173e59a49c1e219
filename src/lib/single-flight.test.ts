import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SingleFlight } from './single-flight.ts';

test('concurrent calls with one key run the work once; only the first is the leader', async () => {
  const flights = new SingleFlight<number>();
  let runs = 0;
  const work = async () => {
    runs++;
    await new Promise((r) => setTimeout(r, 20));
    return 42;
  };
  const results = await Promise.all([1, 2, 3].map(() => flights.run('k', undefined, work)));
  assert.equal(runs, 1);
  assert.deepEqual(
    results.map((r) => r.value),
    [42, 42, 42],
  );
  assert.deepEqual(
    results.map((r) => r.leader),
    [true, false, false],
  );
  assert.equal(flights.size, 0);
});

test('one waiter aborting leaves the work running for the others; all aborting cancels it', async () => {
  const flights = new SingleFlight<string>();
  let cancelled = false;
  const work = (signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve('done'), 50);
      signal.addEventListener('abort', () => {
        cancelled = true;
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  const a = new AbortController();
  const first = flights.run('k', a.signal, work);
  const second = flights.run('k', undefined, work);
  a.abort(new Error('revoked'));
  await assert.rejects(first, /revoked/);
  assert.equal((await second).value, 'done');
  assert.equal(cancelled, false);

  const b = new AbortController();
  const only = flights.run('j', b.signal, work);
  b.abort(new Error('gone'));
  await assert.rejects(only, /gone/);
  await new Promise((r) => setTimeout(r, 10));
  assert.equal(cancelled, true);
});
