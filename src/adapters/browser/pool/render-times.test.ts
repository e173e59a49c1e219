import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RenderTimes } from './render-times.ts';

describe('RenderTimes', () => {
  it('is 0 until enough renders have succeeded', () => {
    const times = new RenderTimes({ size: 10, minSamples: 3 });
    times.add(500);
    times.add(700);
    assert.equal(times.typical(), 0);
    times.add(600);
    assert.equal(times.typical(), 600);
  });

  it('is the median: one render that took its whole deadline barely moves it', () => {
    const times = new RenderTimes({ size: 5, minSamples: 1 });
    for (const ms of [400, 500, 600, 30_000]) times.add(ms);
    assert.equal(times.typical(), 550);
    times.add(30_000);
    assert.equal(times.typical(), 600);
  });

  it('keeps only the most recent renders', () => {
    const times = new RenderTimes({ size: 3, minSamples: 1 });
    for (const ms of [100, 100, 100]) times.add(ms);
    assert.equal(times.typical(), 100);
    for (const ms of [2_000, 2_000]) times.add(ms);
    assert.equal(times.typical(), 2_000);
  });
});
