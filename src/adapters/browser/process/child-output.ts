/**
 * What Chromium said before it failed: a bounded tail of its stderr and how it exited, for the
 * log when it cannot start or dies (docs/security.md). BrowserInstance attaches the child
 * it spawns, before any output can have been read.
 */
import type { ChildProcess } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';

/** Lines kept of the child's stderr (the last ones). */
export const TAIL_LINES = 20;
/** Bytes (UTF-16 code units, near enough) kept of the child's stderr. */
export const TAIL_CHARS = 4_096;
/** A single line longer than this is cut. */
const LINE_CHARS = 512;
/**
 * Lines left out of the tail: without a D-Bus session (a container, a service account)
 * Chromium logs a dozen of these at every start, which would push out the lines that tell why
 * it failed.
 */
const NOISE = /:ERROR:dbus\//;

/** The last lines of a stream, within TAIL_LINES and TAIL_CHARS. */
export class OutputTail {
  readonly #lines: string[] = [];
  #chars = 0;
  #partial = '';

  push(text: string): void {
    const parts = (this.#partial + text).split('\n');
    this.#partial = (parts.pop() ?? '').slice(-LINE_CHARS);
    for (const part of parts) this.#add(part);
  }

  #add(raw: string): void {
    const line = raw.trimEnd();
    if (line === '' || NOISE.test(line)) return;
    const kept = line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}...` : line;
    this.#lines.push(kept);
    this.#chars += kept.length;
    while (this.#lines.length > TAIL_LINES || this.#chars > TAIL_CHARS) {
      this.#chars -= this.#lines.shift()?.length ?? 0;
    }
  }

  lines(): string[] {
    const partial = this.#partial.trimEnd();
    return partial === '' ? [...this.#lines] : [...this.#lines, partial];
  }
}

export interface ChildExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** One spawned Chromium: its stderr tail and, once known, its exit. */
export class WatchedChild {
  readonly stderr = new OutputTail();
  #exit: ChildExit | null = null;
  #spawnError: string | null = null;
  #onExit: (() => void) | null = null;
  readonly #exited = new Promise<void>((resolve) => {
    this.#onExit = resolve;
  });
  #attached = false;

  get attached(): boolean {
    return this.#attached;
  }

  attach(child: ChildProcess): void {
    if (this.#attached) return;
    this.#attached = true;
    const decoder = new StringDecoder('utf8');
    child.stderr?.on('data', (chunk: Buffer) => this.stderr.push(decoder.write(chunk)));
    const exited = (exitCode: number | null, signal: NodeJS.Signals | null): void => {
      this.#exit = { exitCode, signal };
      this.#onExit?.();
    };
    if (child.exitCode !== null || child.signalCode !== null) {
      exited(child.exitCode, child.signalCode);
    } else {
      child.once('exit', exited);
    }
    child.once('error', (err) => {
      // The binary could not be run at all (EACCES, ENOENT): there is no exit to wait for.
      this.#spawnError = err.message;
      this.#onExit?.();
    });
  }

  /** How the process ended, waiting up to `waitMs` for it; null while it still runs. */
  async exit(waitMs = 0): Promise<ChildExit | null> {
    if (this.#exit === null && this.#spawnError === null && waitMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, waitMs);
        }),
      ]);
      clearTimeout(timer);
    }
    return this.#exit;
  }

  /** Fields for a log line: exit code or signal, spawn error, the stderr tail. */
  async report(waitMs = 0): Promise<Record<string, unknown>> {
    const exit = await this.exit(waitMs);
    return {
      exitCode: exit?.exitCode ?? null,
      signal: exit?.signal ?? null,
      ...(this.#spawnError !== null ? { spawnError: this.#spawnError } : {}),
      stderr: this.stderr.lines(),
    };
  }
}
