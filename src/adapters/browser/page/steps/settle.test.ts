import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pageActivity, restWarning } from './settle.ts';

describe('pageActivity (the probe answer, as read back from the page)', () => {
  it('reads since, frames and changes, then the pending work as due and age pairs', () => {
    assert.deepEqual(pageActivity('120 3 4 0 16 250 30'), {
      since: 120,
      frames: 3,
      changes: 4,
      pending: [
        { due: 0, age: 16 },
        { due: 250, age: 30 },
      ],
    });
    assert.deepEqual(pageActivity('-1000000000 0 0'), {
      since: -1e9,
      frames: 0,
      changes: 0,
      pending: [],
    });
  });

  it('keeps at most 50 pending pairs however many the answer holds', () => {
    const pairs = Array.from({ length: 60 }, (_, i) => `${i} 1`).join(' ');
    const read = pageActivity(`5 1 1 ${pairs}`);
    assert.equal(read?.pending.length, 50);
    assert.deepEqual(read?.pending.at(-1), { due: 49, age: 1 });
  });

  it('refuses anything that is not the probe answer (a page may have replaced the probe)', () => {
    for (const value of [
      null,
      undefined,
      42,
      { since: 1 },
      ['1', '2', '3'],
      '',
      '1 2',
      '1 2 3 4',
      '1 2 x',
      '1 2 Infinity',
      `1 2 3${' 1 1'.repeat(1_100)}`,
    ]) {
      assert.equal(pageActivity(value), null, JSON.stringify(value)?.slice(0, 40));
    }
  });
});

describe('restWarning', () => {
  it('warns only when the wait ended at its bound', () => {
    assert.equal(restWarning({ atRest: true, waitedMs: 300, still: null }), null);
    assert.deepEqual(
      restWarning({ atRest: false, waitedMs: 2000.4, still: '3 document changes' }),
      {
        code: 'not_at_rest',
        message:
          'the page was still changing after 2000 ms (3 document changes); it was captured as it was',
      },
    );
  });
});
