/**
 * The CDP connection to our Chromium over its pipe (fds 3 and 4, `--remote-debugging-pipe`),
 * measured before anything is decoded. puppeteer's own pipe transport turns every message
 * into a string whatever its size: a page that makes Chromium write a message longer than
 * Node's longest string (0x1fffffe8 characters) makes it throw inside a stream listener, and
 * the whole service exits. Here a message over its bound is never held, decoded or handed on:
 *
 * - an event (console output, an exception: what a page can make as large as it likes) is
 *   skipped: its bytes are read and dropped up to its end, and nothing else notices;
 * - an answer fails only its own command: puppeteer gets an error answer with the same id
 *   (and session), so the step that asked for it fails and the browser carries on;
 * - only a message that is neither (no id to answer) cuts the connection, so the browser is
 *   replaced (pool/browser-supervisor.ts) and its captures fail with 503.
 *
 * A message puppeteer cannot handle (JSON it cannot parse, a listener that throws) cuts the
 * connection too, instead of an uncaught exception.
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

/** Bytes of a skipped message kept from its start (its id or method) and its end (session). */
const HEAD_BYTES = 128;
const TAIL_BYTES = 128;
const ANSWER_HEAD = /^\{"id":(\d+)[,}]/;
const EVENT_HEAD = /^\{"method":"([A-Za-z.]{1,100})"/;
/** Chromium appends the session of a flattened target's message last. */
const SESSION_TAIL = /,"sessionId":"([0-9A-Za-z]{1,64})"\}$/;

/** The message of the error answer that stands in for an answer over the bound. */
export const OVERSIZED_ANSWER = 'the browser answered with more bytes than the service reads';

/** A message over its bound that was dropped without touching the browser. */
export interface DroppedMessage {
  kind: 'event' | 'answer';
  /** Its size in bytes, counted to its end. */
  bytes: number;
  /** The event's method (`Runtime.consoleAPICalled`) or the answer's command id. */
  method?: string;
  id?: number;
}

/** The message being dropped: its size so far, its first bytes and its last ones. */
interface Skipping {
  event: boolean;
  bytes: number;
  head: Buffer;
  tail: Buffer;
}

const noop = (): void => {};

export class BoundedPipeTransport implements ConnectionTransport {
  onmessage?: (message: string) => void;
  onclose?: () => void;
  /** Told of every message dropped over its bound (for the log). */
  ondrop?: (dropped: DroppedMessage) => void;
  readonly #write: Writable;
  readonly #read: Readable;
  readonly #maxMessageBytes: number;
  readonly #maxEventBytes: number;
  /** The message being received, in pieces, and its size so far. */
  #pieces: Buffer[] = [];
  #pendingBytes = 0;
  /** Whether the message being received is an event (its first bytes say so; null: not yet). */
  #event: boolean | null = null;
  /** The message being dropped, once it passed its bound; null while within it. */
  #skipping: Skipping | null = null;
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

  /** Why we cut the connection (a message we could not handle...); null while we have not. */
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
    this.#skipping = null;
    this.#read.removeAllListeners('data');
    this.#read.resume();
  }

  #onData(chunk: Buffer): void {
    let start = 0;
    while (!this.#closed) {
      const end = chunk.indexOf(0, start);
      const piece = chunk.subarray(start, end === -1 ? chunk.length : end);
      if (this.#skipping) this.#skip(this.#skipping, piece);
      else this.#take(piece);
      if (end === -1) return;
      const skipped = this.#skipping;
      const message =
        skipped === null
          ? this.#pieces.length === 1 && this.#pieces[0]
            ? this.#pieces[0]
            : Buffer.concat(this.#pieces, this.#pendingBytes)
          : null;
      this.#pieces = [];
      this.#pendingBytes = 0;
      this.#event = null;
      this.#skipping = null;
      // Delivered on a later turn, in order, as puppeteer's own transport does: its handlers
      // must not run inside the stream's listener.
      if (message) setImmediate(() => this.#deliver(message));
      else if (skipped) this.#dropped(skipped);
      start = end + 1;
    }
  }

  /** Adds a piece of a message within its bound, and starts dropping it once it passes it. */
  #take(piece: Buffer): void {
    this.#pendingBytes += piece.length;
    if (piece.length > 0) this.#pieces.push(piece);
    // Told by the message's first bytes, once that many have come (a chunk may end early).
    if (this.#event === null && this.#pendingBytes >= EVENT_START.length) {
      // totalLength cuts the copy to the head alone.
      this.#event = Buffer.concat(this.#pieces, EVENT_START.length).equals(EVENT_START);
    }
    const bound = this.#event ? this.#maxEventBytes : this.#maxMessageBytes;
    if (this.#pendingBytes <= bound) return;
    // Over the bound: only its first and last bytes are kept from here on.
    const head = Buffer.concat(this.#pieces, Math.min(HEAD_BYTES, this.#pendingBytes));
    this.#skipping = { event: this.#event === true, bytes: 0, head, tail: Buffer.alloc(0) };
    for (const taken of this.#pieces) this.#skip(this.#skipping, taken);
    this.#pieces = [];
  }

  #skip(skipping: Skipping, piece: Buffer): void {
    skipping.bytes += piece.length;
    if (piece.length >= TAIL_BYTES) {
      skipping.tail = Buffer.from(piece.subarray(-TAIL_BYTES));
    } else if (piece.length > 0) {
      skipping.tail = Buffer.concat([skipping.tail, piece]).subarray(-TAIL_BYTES);
    }
  }

  /**
   * A message over its bound has ended: an event is forgotten; an answer becomes an error
   * answer to the same command; anything else leaves nothing to do but cut the connection.
   */
  #dropped(skipped: Skipping): void {
    const head = skipped.head.toString('latin1');
    const session = SESSION_TAIL.exec(skipped.tail.toString('latin1'))?.[1];
    if (skipped.event) {
      const method = EVENT_HEAD.exec(head)?.[1];
      this.ondrop?.({ kind: 'event', bytes: skipped.bytes, ...(method ? { method } : {}) });
      return;
    }
    const id = ANSWER_HEAD.exec(head)?.[1];
    if (id === undefined) {
      this.#cut(`a protocol message of more than ${this.#maxMessageBytes} bytes, with no id`);
      return;
    }
    this.ondrop?.({ kind: 'answer', bytes: skipped.bytes, id: Number(id) });
    const error = JSON.stringify({
      id: Number(id),
      error: { code: -32000, message: `${OVERSIZED_ANSWER} (${this.#maxMessageBytes} bytes)` },
      ...(session ? { sessionId: session } : {}),
    });
    setImmediate(() => this.#deliver(Buffer.from(error)));
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
