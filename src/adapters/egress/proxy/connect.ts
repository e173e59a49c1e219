import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ProxyContext } from './context.ts';
import { parseAuthority } from './parse.ts';
import { rawResponse } from './responses.ts';
import { openTunnel } from './tunnel.ts';
import { relay } from './upstream.ts';

/** `CONNECT host:port` (every https: and wss: connection): a checked tunnel, then raw bytes. */
export async function handleConnect(
  ctx: ProxyContext,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const target = parseAuthority(req.url);
  if (!target) {
    rawResponse(socket, 400, {}, 'CONNECT needs host:port\n');
    return;
  }
  const label = `${target.host}:${target.port}`;
  const upstream = await openTunnel(ctx, socket, { ...target, label });
  if (!upstream) return;
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) upstream.write(head);
  relay(ctx, socket, upstream);
}
