import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ForegroundRenders } from './foreground.ts';

test('quiet once no synchronous render ran for quietMs', () => {
  let now = 1_000;
  const fg = new ForegroundRenders(() => now);
  assert.ok(fg.isQuiet(250), 'nothing ever ran');
  const leave = fg.enter();
  const other = fg.enter();
  assert.equal(fg.inFlight, 2);
  assert.ok(!fg.isQuiet(250));
  leave();
  leave(); // twice is once
  assert.equal(fg.inFlight, 1);
  other();
  now += 100;
  assert.ok(!fg.isQuiet(250), 'one ended 100 ms ago');
  now += 150;
  assert.ok(fg.isQuiet(250));
});

test('waits for the quiet moment, at most maxWaitMs, and gives up on abort', async () => {
  const fg = new ForegroundRenders();
  const leave = fg.enter();
  let done = false;
  const waiting = fg.quiet({ quietMs: 20, maxWaitMs: 60_000, pollMs: 5 }).then(() => {
    done = true;
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(done, false, 'still a render in flight');
  leave();
  await waiting;
  assert.equal(done, true);

  const busy = fg.enter();
  const start = performance.now();
  await fg.quiet({ quietMs: 20, maxWaitMs: 100, pollMs: 5 });
  assert.ok(performance.now() - start >= 95, 'waited its bound');
  const abort = new AbortController();
  const aborted = fg.quiet({ quietMs: 20, maxWaitMs: 60_000, pollMs: 5, signal: abort.signal });
  abort.abort(new Error('stopping'));
  await assert.rejects(aborted, /stopping/);
  busy();
});
