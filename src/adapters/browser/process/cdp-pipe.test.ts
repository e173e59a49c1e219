import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { BoundedPipeTransport } from './cdp-pipe.ts';

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

  it('cuts the connection at a message over the bound, before it ends or is decoded', async () => {
    const t = transport(64);
    t.fromBrowser.write('{"id":1}\0');
    await turn();
    // Never terminated: the bound alone decides, and nothing after it is read.
    t.fromBrowser.write('x'.repeat(40));
    t.fromBrowser.write('x'.repeat(40));
    await turn();
    assert.deepEqual(t.messages, ['{"id":1}']);
    assert.equal(t.closed(), 1);
    assert.match(t.pipe.cutReason ?? '', /more than 64 bytes/);
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
  it('bounds an event far below an answer, even when its first bytes come in pieces', async () => {
    const max = 64 * 1024 * 1024;
    const event = transport(max);
    // The head split across reads: '{"met' then 'hod"...'.
    event.fromBrowser.write('{"met');
    event.fromBrowser.write(`hod":"Runtime.consoleAPICalled","params":{"v":"`);
    event.fromBrowser.write(Buffer.alloc(33 * 1024 * 1024, 0x61));
    await turn();
    assert.match(String(event.pipe.cutReason), /protocol event of more than 33554432 bytes/);
    assert.equal(event.closed(), 1);
    assert.deepEqual(event.messages, []);

    // An answer of the same size is within its own bound.
    const answer = transport(max);
    answer.fromBrowser.write('{"id":7,"result":{"data":"');
    answer.fromBrowser.write(Buffer.alloc(33 * 1024 * 1024, 0x61));
    answer.fromBrowser.write('"}}\0');
    await turn();
    await turn();
    assert.equal(answer.pipe.cutReason, null);
    assert.equal(answer.messages.length, 1);
  });
});
