import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { BoundedPipeTransport, type DroppedMessage, OVERSIZED_ANSWER } from './cdp-pipe.ts';

const turn = () => new Promise((resolve) => setImmediate(resolve));

function transport(maxMessageBytes: number) {
  const toBrowser = new PassThrough();
  const fromBrowser = new PassThrough();
  const pipe = new BoundedPipeTransport(toBrowser, fromBrowser, maxMessageBytes);
  const messages: string[] = [];
  let closed = 0;
  pipe.onmessage = (message) => {
    messages.push(message);
  };
  pipe.onclose = () => {
    closed++;
  };
  return { pipe, toBrowser, fromBrowser, messages, closed: () => closed };
}

describe('BoundedPipeTransport', () => {
  it('splits NUL-terminated messages across and within chunks, in order', async () => {
    const t = transport(1024);
    t.fromBrowser.write('{"id":1}\0{"id"');
    t.fromBrowser.write(':2}');
    t.fromBrowser.write('\0{"id":3}\0');
    await turn();
    await turn();
    assert.deepEqual(t.messages, ['{"id":1}', '{"id":2}', '{"id":3}']);
    t.pipe.send('{"method":"x"}');
    assert.equal(String(t.toBrowser.read()), '{"method":"x"}\0');
  });

  it('keeps multi-byte characters split between chunks whole', async () => {
    const t = transport(1024);
    const bytes = Buffer.from('{"v":"é€"}\0');
    t.fromBrowser.write(bytes.subarray(0, 7));
    t.fromBrowser.write(bytes.subarray(7));
    await turn();
    assert.deepEqual(t.messages, ['{"v":"é€"}']);
  });

  it('turns an answer over the bound into an error answer to the same command', async () => {
    const t = transport(64);
    const drops: DroppedMessage[] = [];
    t.pipe.ondrop = (dropped) => drops.push(dropped);
    t.fromBrowser.write('{"id":1}\0{"id":42,"result":{"data":"');
    t.fromBrowser.write('x'.repeat(100));
    t.fromBrowser.write('x'.repeat(100));
    await turn();
    // Not held, not answered until its end.
    assert.deepEqual(t.messages, ['{"id":1}']);
    t.fromBrowser.write('"},"sessionId":"ABC123"}\0{"id":43}\0');
    await turn();
    await turn();
    assert.equal(t.closed(), 0);
    assert.equal(t.pipe.cutReason, null);
    assert.equal(t.messages.length, 3);
    const error = JSON.parse(t.messages[1] ?? '');
    assert.equal(error.id, 42);
    assert.equal(error.sessionId, 'ABC123');
    assert.match(error.error.message, new RegExp(OVERSIZED_ANSWER));
    assert.equal(t.messages[2], '{"id":43}');
    assert.deepEqual(drops, [{ kind: 'answer', bytes: 251, id: 42 }]);
  });

  it('an answer over the bound without a session is answered without one', async () => {
    const t = transport(16);
    t.fromBrowser.write(`{"id":7,"result":"${'y'.repeat(50)}"}\0`);
    await turn();
    await turn();
    assert.equal(t.messages.length, 1);
    const error = JSON.parse(t.messages[0] ?? '');
    assert.equal(error.id, 7);
    assert.equal('sessionId' in error, false);
  });

  it('cuts the connection at a message over the bound with no id to answer', async () => {
    const t = transport(64);
    t.fromBrowser.write('{"id":1}\0');
    await turn();
    t.fromBrowser.write('x'.repeat(40));
    t.fromBrowser.write('x'.repeat(40));
    // Dropped as it comes (never held); judged at its end.
    assert.equal(t.closed(), 0);
    t.fromBrowser.write('\0');
    await turn();
    assert.deepEqual(t.messages, ['{"id":1}']);
    assert.equal(t.closed(), 1);
    assert.match(t.pipe.cutReason ?? '', /more than 64 bytes, with no id/);
    assert.ok(t.fromBrowser.destroyed);
    t.pipe.send('{"late":true}');
    assert.equal(t.toBrowser.read(), null);
  });

  it('a message exactly at the bound is delivered', async () => {
    const t = transport(8);
    t.fromBrowser.write('12345678\0');
    await turn();
    assert.deepEqual(t.messages, ['12345678']);
    assert.equal(t.closed(), 0);
  });

  it('a message its reader cannot handle cuts the connection instead of throwing', async () => {
    const t = transport(1024);
    t.pipe.onmessage = (message) => {
      JSON.parse(message);
    };
    t.fromBrowser.write('not json\0');
    await turn();
    await turn();
    assert.equal(t.closed(), 1);
    assert.match(t.pipe.cutReason ?? '', /could not be handled/);
  });

  it("a rejected promise from puppeteer's async reader cuts it too", async () => {
    const t = transport(1024);
    // puppeteer's Connection.onMessage is async: its errors are rejections.
    t.pipe.onmessage = (() => Promise.reject(new Error('boom'))) as unknown as (m: string) => void;
    t.fromBrowser.write('{}\0');
    await turn();
    await turn();
    assert.equal(t.closed(), 1);
    assert.match(t.pipe.cutReason ?? '', /boom/);
  });

  it('reports the end of the pipe once', async () => {
    const t = transport(1024);
    t.fromBrowser.destroy();
    await turn();
    t.pipe.close();
    await turn();
    assert.equal(t.closed(), 1);
    assert.equal(t.pipe.cutReason, null);
  });
});

describe('BoundedPipeTransport, events', () => {
  it('skips an event over its bound, far below an answer, and reads on', async () => {
    const max = 64 * 1024 * 1024;
    const event = transport(max);
    const drops: DroppedMessage[] = [];
    event.pipe.ondrop = (dropped) => drops.push(dropped);
    // The head split across reads: '{"met' then 'hod"...'.
    event.fromBrowser.write('{"met');
    event.fromBrowser.write(`hod":"Runtime.consoleAPICalled","params":{"v":"`);
    for (let i = 0; i < 33; i++) event.fromBrowser.write(Buffer.alloc(1024 * 1024, 0x61));
    event.fromBrowser.write('"},"sessionId":"S1"}\0{"method":"Page.loadEventFired"}\0{"id":2}\0');
    await turn();
    await turn();
    assert.equal(event.pipe.cutReason, null);
    assert.equal(event.closed(), 0);
    assert.deepEqual(event.messages, ['{"method":"Page.loadEventFired"}', '{"id":2}']);
    assert.equal(drops.length, 1);
    assert.equal(drops[0]?.kind, 'event');
    assert.equal(drops[0]?.method, 'Runtime.consoleAPICalled');
    assert.ok((drops[0]?.bytes ?? 0) > 33 * 1024 * 1024);

    // An answer of the same size is within its own bound.
    const answer = transport(max);
    answer.fromBrowser.write('{"id":7,"result":{"data":"');
    answer.fromBrowser.write(Buffer.alloc(33 * 1024 * 1024, 0x61));
    answer.fromBrowser.write('"}}\0');
    await turn();
    await turn();
    assert.equal(answer.pipe.cutReason, null);
    assert.equal(answer.messages.length, 1);
    assert.equal(answer.messages[0]?.length, 33 * 1024 * 1024 + 29);
  });

  it('holds no more than the head and tail of a skipped event', async () => {
    const t = transport(32);
    t.fromBrowser.write('{"method":"Runtime.exceptionThrown","params":{"text":"');
    for (let i = 0; i < 10; i++) t.fromBrowser.write('z'.repeat(1000));
    await turn();
    assert.equal(t.messages.length, 0);
    t.fromBrowser.write('"}}\0{"id":1}\0');
    await turn();
    assert.deepEqual(t.messages, ['{"id":1}']);
  });
});
