import type { IncomingMessage, Server } from 'node:http';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { handleConnect } from './connect.ts';
import type { ProxyContext } from './context.ts';
import { forwardRequest } from './forward.ts';
import { rawResponse, sendText, UNREACHABLE } from './responses.ts';
import { handleUpgrade } from './upgrade.ts';

/**
 * The proxy's HTTP server, its bounds set and each kind of client request routed to its path:
 * `request` (plain http:) to forwardRequest, `connect` to handleConnect, `upgrade` to
 * handleUpgrade; malformed or oversized heads are answered here.
 */
export function createProxyServer(ctx: ProxyContext, maxHeaderSize: number): Server {
  const { logger } = ctx;
  // A request head must arrive within headersTimeout (slow-loris); bodies and responses are
  // bounded by the idle timeout instead, so long downloads keep working.
  const headersTimeout = Math.min(ctx.idleTimeoutMs, 20_000);
  const server = createServer({
    maxHeaderSize,
    requireHostHeader: false,
    headersTimeout,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
    keepAliveTimeout: 5_000,
  });
  server.maxConnections = ctx.maxConnections;
  server.setTimeout(ctx.idleTimeoutMs);

  server.on('connection', (socket: Socket) => {
    ctx.clients.add(socket);
    socket.on('error', (err) => logger.debug({ err: err.message }, 'egress client error'));
    socket.once('close', () => ctx.clients.delete(socket));
    if (ctx.closing) socket.destroy();
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const status =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? 431
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? 408
          : 400;
    rawResponse(socket, status);
  });
  server.on('request', (req, res) => {
    forwardRequest(ctx, req, res).catch((err: unknown) => {
      logger.warn({ err: String(err) }, 'egress proxy request failed');
      sendText(res, 502, 'egress proxy error\n', UNREACHABLE);
    });
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleConnect(ctx, req, socket, head).catch((err: unknown) => {
      logger.warn({ err: String(err) }, 'egress proxy CONNECT failed');
      socket.destroy();
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleUpgrade(ctx, req, socket, head).catch((err: unknown) => {
      logger.warn({ err: String(err) }, 'egress proxy upgrade failed');
      socket.destroy();
    });
  });
  return server;
}
