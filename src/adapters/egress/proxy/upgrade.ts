import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ProxyContext } from './context.ts';
import { forwardableHeaders, parseAbsoluteTarget, targetPort } from './parse.ts';
import { rawResponse } from './responses.ts';
import { openTunnel } from './tunnel.ts';
import { relay } from './upstream.ts';

/**
 * A plain-HTTP request with `Upgrade` (ws:): the request head is rewritten to origin form and
 * sent to the checked address, then the two sockets are relayed like a tunnel.
 */
export async function handleUpgrade(
  ctx: ProxyContext,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const url = parseAbsoluteTarget(req.url);
  if (!url) {
    rawResponse(socket, 400, {}, 'not a proxy request\n');
    return;
  }
  const port = targetPort(url);
  const upstream = await openTunnel(ctx, socket, { host: url.hostname, port, label: url.host });
  if (!upstream) return;
  const headers = forwardableHeaders(req.rawHeaders, true);
  const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
  if (head.length > 0) upstream.write(head);
  relay(ctx, socket, upstream);
}
