import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findChromium, launchableBinary } from './find-chromium.ts';

describe('findChromium', () => {
  const dir = mkdtempSync(join(tmpdir(), 'find-chromium-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('takes an explicit executable as it is', () => {
    const bin = join(dir, 'chrome');
    writeFileSync(bin, '#!/bin/sh\n');
    chmodSync(bin, 0o755);
    assert.equal(findChromium(bin), bin);
  });

  it('an explicit path that is missing or not executable gives null, not another browser', () => {
    assert.equal(findChromium(join(dir, 'missing')), null);
    const plain = join(dir, 'plain');
    writeFileSync(plain, '');
    chmodSync(plain, 0o644);
    assert.equal(findChromium(plain), null);
    assert.equal(findChromium(dir), null);
  });

  it('leaves a path that is not a known launcher script alone', () => {
    const bin = join(dir, 'chrome');
    assert.equal(launchableBinary(bin), bin);
  });
});
