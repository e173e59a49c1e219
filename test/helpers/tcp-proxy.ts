import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from './app.ts';

/**
 * A TCP forwarder in front of a real service, so a test can make that service vanish
 * (every connection cut, the port closed) and come back on the same port without
 * touching the service itself.
 */
export interface TcpProxy {
  port: number;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  const proxy: TcpProxy = {
    port,
    start: () =>
      new Promise((resolve, reject) => {
        const s = createServer((client) => {
          const upstream = connect(target);
          sockets.add(client);
          sockets.add(upstream);
          const drop = () => {
            client.destroy();
            upstream.destroy();
            sockets.delete(client);
            sockets.delete(upstream);
          };
          client.on('error', drop).on('close', drop);
          upstream.on('error', drop).on('close', drop);
          client.pipe(upstream).pipe(client);
        });
        s.once('error', reject);
        s.listen(port, '127.0.0.1', () => {
          server = s;
          resolve();
        });
      }),
    stop: async () => {
      const s = server;
      server = null;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    },
  };
  await proxy.start();
  return proxy;
}
