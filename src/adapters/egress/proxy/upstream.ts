import type { LookupFunction } from 'node:net';
import { connect as netConnect, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { CheckedDestination } from '../policy.ts';
import type { ProxyContext } from './context.ts';

/** Connections only ever go to checked literal addresses; a name reaching a socket is a bug. */
export const noLookup: LookupFunction = (hostname, _options, callback) => {
  const err = Object.assign(new Error(`egress proxy refuses to resolve ${hostname}`), {
    code: 'ENOTFOUND',
  });
  callback(err, '', 0);
};

/** TCP connection to a checked address, with a connect timeout. */
export function openUpstream(
  ctx: ProxyContext,
  dest: CheckedDestination,
  port: number,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    if (ctx.closing) {
      reject(new Error('egress proxy is closing'));
      return;
    }
    const socket = netConnect({
      host: dest.address,
      port,
      family: dest.family,
      lookup: noLookup,
    });
    ctx.upstreams.add(socket);
    socket.once('close', () => ctx.upstreams.delete(socket));
    const timer = setTimeout(
      () => socket.destroy(new Error(`connect timeout after ${ctx.connectTimeoutMs} ms`)),
      ctx.connectTimeoutMs,
    );
    socket.on('error', (err) => {
      clearTimeout(timer);
      ctx.logger.debug({ err: err.message, port }, 'egress upstream socket error');
      reject(err);
    });
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
  });
}

/**
 * Pipes two sockets both ways. An error or idling on either destroys both; a clean close of
 * one ends the other once its pending writes are flushed (no truncated downloads).
 */
export function relay(ctx: ProxyContext, client: Duplex, upstream: Socket): void {
  const destroyBoth = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('error', destroyBoth);
  upstream.on('error', destroyBoth);
  client.on('close', () => {
    if (!upstream.destroyed) upstream.end();
  });
  upstream.on('close', () => {
    if (!client.destroyed) client.end();
  });
  upstream.setTimeout(ctx.idleTimeoutMs, destroyBoth);
  if (client instanceof Socket) client.setTimeout(ctx.idleTimeoutMs, destroyBoth);
  client.pipe(upstream);
  upstream.pipe(client);
}
