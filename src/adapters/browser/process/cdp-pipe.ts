/**
 * The CDP connection to our Chromium over its pipe (fds 3 and 4, `--remote-debugging-pipe`),
 * measured before anything is decoded. puppeteer's own pipe transport turns every message
 * into a string whatever its size: a page that makes Chromium write a message longer than
 * Node's longest string (0x1fffffe8 characters) makes it throw inside a stream listener, and
 * the whole service exits. Here a message over `maxMessageBytes` is dropped undecoded and the
 * connection is cut, so the browser is replaced (pool/browser-supervisor.ts) and only its captures
 * fail, with 503. A message puppeteer cannot handle (JSON it cannot parse, a listener that
 * throws) cuts the connection too, instead of an uncaught exception.
 */
import type { Readable, Writable } from 'node:stream';
import type { ConnectionTransport } from 'puppeteer-core';
import { BOUNDS } from '../../../domain/bounds.ts';

/**
 * How an event starts: Chromium writes an event's `method` first and an answer's `id` first.
 * An event's size is up to the page (console output, exceptions), so events get a bound of
 * their own, far below the answers' (a screenshot is an answer).
 */
const EVENT_START = Buffer.from('{"method"');

const noop = (): void => {};

export class BoundedPipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  readonly #write: Writable;
  readonly #read: Readable;
  readonly #maxMessageBytes: number;
  readonly #maxEventBytes: number;
  /** The message being received, in pieces, and its size so far. */
  #pieces: Buffer[] = [];
  #pendingBytes = 0;
  /** Whether the message being received is an event (its first bytes say so; null: not yet). */
  #event: boolean | null = null;
  #closed = false;
  #cutReason: string | null = null;

  constructor(write: Writable, read: Readable, maxMessageBytes: number) {
    this.#write = write;
    this.#read = read;
    this.#maxMessageBytes = maxMessageBytes;
    this.#maxEventBytes = Math.min(maxMessageBytes, BOUNDS.browser.maxEventMessageBytes);
    read.on('data', (chunk: Buffer) => this.#onData(chunk));
    read.once('close', () => this.#end());
    // For the life of the pipes, not only of the connection: an error event without a
    // listener (EPIPE from a dying browser) would be an uncaught exception.
    read.on('error', noop);
    write.on('error', noop);
  }

  /** Why we cut the connection (a message over the bound...); null while we have not. */
  get cutReason(): string | null {
    return this.#cutReason;
  }

  send(message: string): void {
    // After the end puppeteer refuses to send by itself; a late call has nowhere to go.
    if (this.#closed) return;
    this.#write.write(message);
    this.#write.write('\0');
  }

  close(): void {
    this.#closed = true;
    this.#pieces = [];
    this.#read.removeAllListeners('data');
    this.#read.resume();
  }

  #onData(chunk: Buffer): void {
    let start = 0;
    while (!this.#closed) {
      const end = chunk.indexOf(0, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      this.#pendingBytes += piece.length;
      if (piece.length > 0) this.#pieces.push(piece);
      // Told by the message's first bytes, once that many have come (a chunk may end early).
      if (this.#event === null && this.#pendingBytes >= EVENT_START.length) {
        // totalLength cuts the copy to the head alone.
        this.#event = Buffer.concat(this.#pieces, EVENT_START.length).equals(EVENT_START);
      }
      const bound = this.#event ? this.#maxEventBytes : this.#maxMessageBytes;
      if (this.#pendingBytes > bound) {
        this.#cut(`a protocol ${this.#event ? 'event' : 'message'} of more than ${bound} bytes`);
        return;
      }
      if (end === -1) return;
      const message =
        this.#pieces.length === 1 && this.#pieces[0]
          ? this.#pieces[0]
          : Buffer.concat(this.#pieces, this.#pendingBytes);
      this.#pieces = [];
      this.#pendingBytes = 0;
      this.#event = null;
      // Delivered on a later turn, in order, as puppeteer's own transport does: its handlers
      // must not run inside the stream's listener.
      setImmediate(() => this.#deliver(message));
      start = end + 1;
    }
  }

  #deliver(message: Buffer): void {
    if (this.#closed) return;
    try {
      // Within the bound, so within Node's longest string.
      const result: unknown = this.onmessage?.(message.toString('utf8'));
      // puppeteer's Connection.onMessage is async: its failures are a rejected promise.
      if (result instanceof Promise) result.catch((err: unknown) => this.#failed(err));
    } catch (err) {
      this.#failed(err);
    }
  }

  #failed(err: unknown): void {
    this.#cut(`a protocol message that could not be handled (${String(err).slice(0, 200)})`);
  }

  /** Stops reading the browser for good and reports the connection closed. */
  #cut(reason: string): void {
    if (this.#closed) return;
    this.#cutReason = reason;
    this.close();
    // Nothing more is read: the browser's next write fails and it is killed anyway.
    this.#read.destroy();
    this.#end();
  }

  #end(): void {
    this.#closed = true;
    const onclose = this.onclose;
    this.onclose = undefined;
    onclose?.();
  }
}
