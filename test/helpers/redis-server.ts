import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './app.ts';

/** A private redis-server child on its own port, to stop and start again mid-test. */
export interface RedisServer {
  port: number;
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const pong = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(String(data).startsWith('+PONG')));
  });

export async function startRedisServer(binary = 'redis-server'): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const server: RedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      const proc = spawn(
        binary,
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        { stdio: 'ignore' },
      );
      child = proc;
      exited = new Promise((resolve) => proc.once('exit', () => resolve()));
      const deadline = Date.now() + 10_000;
      while (!(await pong(port))) {
        if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (!child) return;
      child.kill('SIGTERM');
      await exited;
      child = null;
    },
  };
  process.once('exit', () => child?.kill('SIGKILL'));
  await server.start();
  return server;
}
