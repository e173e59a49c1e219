import assert from 'node:assert/strict';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryInBackground } from './retry.ts';

it('runs once when the first attempt succeeds', async () => {
  let calls = 0;
  await retryInBackground(async () => {
    calls++;
  }, [5, 5]);
  assert.equal(calls, 1);
});

it('returns at once on failure and retries in the background until it succeeds', async () => {
  let calls = 0;
  await retryInBackground(async () => {
    calls++;
    if (calls < 3) throw new Error('down');
  }, [5, 5, 5, 5]);
  assert.equal(calls, 1);
  await sleep(60);
  assert.equal(calls, 3);
});

it('gives up after the last delay and reports the last error', async () => {
  let calls = 0;
  let gaveUp: unknown;
  await retryInBackground(
    async () => {
      calls++;
      throw new Error(`down ${calls}`);
    },
    [5, 5],
    (err) => {
      gaveUp = err;
    },
  );
  await sleep(60);
  assert.equal(calls, 3);
  assert.equal((gaveUp as Error).message, 'down 3');
});
