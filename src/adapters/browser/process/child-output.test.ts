import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OutputTail, TAIL_CHARS, TAIL_LINES } from './child-output.ts';

describe('OutputTail', () => {
  it('keeps the last lines, joined across chunks, with the unfinished one last', () => {
    const tail = new OutputTail();
    tail.push('first li');
    tail.push('ne\n\nsecond line\r\nthi');
    tail.push('rd');
    assert.deepEqual(tail.lines(), ['first line', 'second line', 'third']);
  });

  it('stays within its line and size bounds however much is written', () => {
    const tail = new OutputTail();
    for (let i = 0; i < 1_000; i++) tail.push(`line ${i}\n`);
    assert.equal(tail.lines().length, TAIL_LINES);
    assert.equal(tail.lines().at(-1), 'line 999');
    for (let i = 0; i < 100; i++) tail.push(`${'x'.repeat(2_000)}\n`);
    tail.push('y'.repeat(100_000));
    const kept = tail.lines();
    assert.ok(kept.join('').length <= TAIL_CHARS + 600, `${kept.join('').length} characters`);
  });

  it('leaves out the D-Bus noise of every start', () => {
    const tail = new OutputTail();
    tail.push('[1:2:1123/151718.4:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n');
    tail.push('[1:1:1123/151718.5:FATAL:something.cc:1] Check failed\n');
    assert.deepEqual(tail.lines(), ['[1:1:1123/151718.5:FATAL:something.cc:1] Check failed']);
  });
});
