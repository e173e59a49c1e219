import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isAppError } from '../../../domain/errors.ts';
import { RestartBackoff } from './restart-backoff.ts';

const retryAfter = (backoff: RestartBackoff): number => {
  const err = backoff.unavailable('the browser is not available');
  assert.ok(isAppError(err));
  assert.equal(err.code, 'overloaded');
  return Number(err.headers?.['Retry-After']);
};

describe('RestartBackoff', () => {
  it('waits nothing before a failure, then doubles from the first wait up to the cap', () => {
    const backoff = new RestartBackoff({ firstMs: 500, maxMs: 3_000 });
    assert.equal(backoff.delayMs(), 0);
    assert.deepEqual(
      [backoff.failed(), backoff.failed(), backoff.failed(), backoff.failed()],
      [500, 1_000, 2_000, 3_000],
    );
    assert.equal(backoff.failures, 4);
    backoff.succeeded();
    assert.equal(backoff.failures, 0);
    assert.equal(backoff.delayMs(), 0);
    assert.equal(backoff.failed(), 500);
  });

  it('answers 503 with a Retry-After past the next attempt, 1 to 30 s', () => {
    const backoff = new RestartBackoff({ firstMs: 4_000, maxMs: 60_000 });
    assert.equal(retryAfter(backoff), 1);
    backoff.failed();
    assert.equal(retryAfter(backoff), 4);
    for (let i = 0; i < 5; i++) backoff.failed();
    assert.equal(retryAfter(backoff), 30);
  });

  it('adds what an attempt takes, and keeps the cause', () => {
    const backoff = new RestartBackoff({ firstMs: 500, maxMs: 10_000, attemptMs: 2_000 });
    assert.equal(retryAfter(backoff), 2);
    backoff.failed();
    assert.equal(retryAfter(backoff), 3);
    const cause = new Error('no chromium');
    assert.equal(backoff.unavailable('the browser is not available', cause).cause, cause);
  });
});
