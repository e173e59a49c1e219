import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDiskFull } from './disk-full.ts';

describe('isDiskFull', () => {
  it('knows ENOSPC, EDQUOT, SQLITE_FULL and PostgreSQL disk_full, also as a cause', () => {
    assert.equal(isDiskFull(Object.assign(new Error('x'), { code: 'ENOSPC' })), true);
    assert.equal(isDiskFull(Object.assign(new Error('x'), { code: 'EDQUOT' })), true);
    assert.equal(
      isDiskFull(Object.assign(new Error('full'), { code: 'ERR_SQLITE_ERROR', errcode: 13 })),
      true,
    );
    assert.equal(isDiskFull(new Error('wrapped', { cause: { code: 'ENOSPC' } })), true);
    assert.equal(isDiskFull(Object.assign(new Error('disk full'), { code: '53100' })), true);
  });
  it('refuses everything else', () => {
    assert.equal(isDiskFull(Object.assign(new Error('x'), { code: 'EACCES' })), false);
    assert.equal(isDiskFull(Object.assign(new Error('x'), { errcode: 19 })), false);
    assert.equal(isDiskFull(null), false);
    assert.equal(isDiskFull('ENOSPC'), false);
  });
});
