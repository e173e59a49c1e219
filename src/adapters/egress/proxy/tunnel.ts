import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type ProxyContext, tooBusy } from './context.ts';
import { checkTarget } from './destination.ts';
import { laneFor, tunnelVia } from './lanes.ts';
import { rawResponse, refuseSocket, UNREACHABLE } from './responses.ts';
import { openUpstream } from './upstream.ts';

/**
 * What CONNECT and Upgrade share before their bytes flow: check the destination, respect the
 * upstream bound, connect to the checked address. Each failure is answered on the client's
 * socket and gives null; so does a client that left, or a proxy closing, meanwhile.
 */
export async function openTunnel(
  ctx: ProxyContext,
  socket: Duplex,
  target: { host: string; port: number; label: string },
): Promise<Socket | null> {
  const lane = laneFor(ctx, socket, target.host);
  if (lane !== null) return tunnelVia(ctx, lane, socket, target);
  const verdict = await checkTarget(ctx, target.host, target.port);
  if (socket.destroyed) return null;
  if (!verdict.ok) {
    refuseSocket(socket, verdict);
    return null;
  }
  if (tooBusy(ctx)) {
    rawResponse(socket, 503, {}, 'egress proxy busy\n');
    return null;
  }
  let upstream: Socket;
  try {
    upstream = await openUpstream(ctx, verdict.dest, target.port);
  } catch {
    rawResponse(socket, 502, UNREACHABLE, `could not connect to ${target.label}\n`);
    return null;
  }
  if (socket.destroyed || ctx.closing) {
    upstream.destroy();
    return null;
  }
  return upstream;
}
