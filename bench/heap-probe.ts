/**
 * Node's heap after a full garbage collection, read from outside a running service through
 * its inspector: the figure of a Node process that a leak raises and nothing else does. Its
 * PSS also follows how far V8 has grown its heap (young generation included), which V8 keeps
 * after a busy spell: 290 -> 350 MiB over a 1,000-capture soak while the heap after a
 * collection stayed at 46-47 MiB.
 *
 * The service is started with `--inspect-port=127.0.0.1:PORT` in NODE_OPTIONS (nothing listens
 * then); the first reading sends SIGUSR1, which opens the inspector on that loopback port.
 */
const CONNECT_ATTEMPTS = 100;
const CONNECT_PAUSE_MS = 100;
const COMMAND_TIMEOUT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class HeapProbe {
  readonly #pid: number;
  readonly #port: number;
  #socket: WebSocket | null = null;
  #nextId = 0;

  constructor(pid: number, port: number) {
    this.#pid = pid;
    this.#port = port;
  }

  /** NODE_OPTIONS for the process to probe. */
  static nodeOptions(port: number): string {
    return `--inspect-port=127.0.0.1:${port}`;
  }

  /** Heap used (MiB) right after a full collection. */
  async heapAfterGcMiB(): Promise<number> {
    await this.#send('HeapProfiler.collectGarbage');
    const answer = (await this.#send('Runtime.evaluate', {
      expression: 'process.memoryUsage().heapUsed',
      returnByValue: true,
    })) as { result?: { value?: unknown } };
    const used = answer.result?.value;
    if (typeof used !== 'number') throw new Error('the inspector gave no heap figure');
    return Math.round((used / 2 ** 20) * 10) / 10;
  }

  close(): void {
    this.#socket?.close();
    this.#socket = null;
  }

  async #connect(): Promise<WebSocket> {
    if (this.#socket) return this.#socket;
    process.kill(this.#pid, 'SIGUSR1');
    let url: string | undefined;
    for (let i = 0; i < CONNECT_ATTEMPTS && url === undefined; i++) {
      const targets = (await fetch(`http://127.0.0.1:${this.#port}/json/list`)
        .then((res) => res.json())
        .catch(() => null)) as Array<{ webSocketDebuggerUrl?: string }> | null;
      url = targets?.[0]?.webSocketDebuggerUrl;
      if (url === undefined) await sleep(CONNECT_PAUSE_MS);
    }
    if (url === undefined) throw new Error(`no inspector on port ${this.#port}`);
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error('inspector connection failed')), {
        once: true,
      });
    });
    this.#socket = socket;
    return socket;
  }

  async #send(method: string, params: object = {}): Promise<unknown> {
    const socket = await this.#connect();
    const id = ++this.#nextId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.removeEventListener('message', onMessage);
        reject(new Error(`inspector: no answer to ${method}`));
      }, COMMAND_TIMEOUT_MS);
      const onMessage = (event: MessageEvent): void => {
        const message = JSON.parse(String(event.data)) as {
          id?: number;
          result?: unknown;
          error?: { message: string };
        };
        if (message.id !== id) return;
        clearTimeout(timer);
        socket.removeEventListener('message', onMessage);
        if (message.error) reject(new Error(`inspector: ${message.error.message}`));
        else resolve(message.result);
      };
      socket.addEventListener('message', onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  }
}
