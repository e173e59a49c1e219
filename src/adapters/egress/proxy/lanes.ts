/**
 * Lanes (docs/proxies.md): the egress proxy's way of sending one browser context's traffic
 * out through an upstream proxy. A lane is a listener of its own on loopback; the context that
 * uses it names it as its proxy server, and every connection accepted there is handed to the
 * egress proxy's one HTTP server, marked with its lane. The egress rules apply on a lane as on
 * the direct path; only the last hop changes: a tunnel through the lane's upstream instead of
 * a connection to the checked address. What failed upstream is kept on the lane, for the
 * capture's 502 `proxy_error` to name.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import { createServer, isIP, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isAppError } from '../../../domain/errors.ts';
import { screenDestination } from '../policy.ts';
import { type ProxyContext, tooBusy } from './context.ts';
import { checkTarget, type Verdict } from './destination.ts';
import { forwardableHeaders } from './parse.ts';
import {
  rawResponse,
  refuseRequest,
  refuseSocket,
  sendText,
  streamAnswer,
  UNREACHABLE,
} from './responses.ts';
import {
  bypasses,
  connectToProxy,
  ProxyFailure,
  type ProxyRoute,
  proxyAuthorization,
  tunnelThrough,
} from './upstream-proxy.ts';

export interface LaneState {
  readonly route: ProxyRoute;
  /** The last upstream failure since the lane's capture began (takeFailure), else null. */
  failure: string | null;
}

export interface Lane {
  /** `http://127.0.0.1:PORT`: the browser context's proxy server. */
  readonly url: string;
  /** Its proxy resolves target names (remote_dns): none is resolved here. */
  readonly remoteDns: boolean;
  /** What failed upstream since the last call (a ProxyFailure's words), else null. */
  takeFailure(): string | null;
  close(): Promise<void>;
}

/**
 * Marks the proxy's 502 for an upstream that failed, with what failed (the renderer answers
 * `proxy_error` naming it: network-watch.ts).
 */
export const proxyFailed = (reason: string): Record<string, string> => ({
  'x-egress-error': 'unreachable',
  'x-egress-proxy-error': reason,
});

/** Opens a lane for `route` whose connections `server` (the egress proxy's) handles. */
export async function openLane(
  ctx: ProxyContext,
  server: { emit(event: 'connection', socket: Socket): boolean },
  route: ProxyRoute,
): Promise<Lane> {
  const state: LaneState = { route, failure: null };
  const sockets = new Set<Socket>();
  const listener: Server = createServer((socket) => {
    if (ctx.closing) {
      socket.destroy();
      return;
    }
    // Counted with the proxy's own clients, under the same bound.
    if (ctx.clients.size >= ctx.maxConnections) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    ctx.lanes.set(socket, state);
    server.emit('connection', socket);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => {
      listener.off('error', reject);
      resolve();
    });
  });
  const address = listener.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    remoteDns: route.remoteDns,
    takeFailure: () => {
      const failure = state.failure;
      state.failure = null;
      return failure;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        listener.close(() => resolve());
      }),
  };
}

/** The lane a client connection came in on, unless `host` bypasses its proxy. */
export function laneFor(ctx: ProxyContext, socket: unknown, host: string): LaneState | null {
  const lane = ctx.lanes.get(socket as Socket) ?? null;
  return lane !== null && !bypasses(lane.route, host) ? lane : null;
}

/**
 * The target judged before anything leaves: resolved and checked here, or (remote_dns) only
 * what is known without DNS, the name then going to the proxy unresolved.
 */
async function judge(
  ctx: ProxyContext,
  lane: LaneState,
  host: string,
  port: number,
): Promise<Verdict> {
  if (!lane.route.remoteDns) return checkTarget(ctx, host, port);
  try {
    const known = screenDestination(ctx.policy, host, port);
    return { ok: true, dest: known ?? { address: host, family: 4 } };
  } catch (err) {
    if (isAppError(err) && err.code === 'url_not_allowed') {
      ctx.refused++;
      const info = { host, port, reason: err.message };
      ctx.logger.warn(info, 'egress refused');
      try {
        ctx.onRefused?.(info);
      } catch (hookErr) {
        ctx.logger.warn({ err: hookErr }, 'egress onRefused hook threw');
      }
      return { ok: false, status: 403, reason: err.message };
    }
    return { ok: false, status: 502, reason: 'destination check failed' };
  }
}

/**
 * What the upstream proxy is given for a target. An operator's proxy may sit in a network of
 * its own, whose resolver could answer a name with an address there: it is given the address
 * checked here (DNS rebinding between two resolvers has no way in), unless it is marked
 * `remote_dns`, whose point is its own names. The caller's own proxy is given the name (its
 * network is the caller's), except through `socks5://`, which means "resolved here".
 */
function given(lane: LaneState, host: string, checked: string): string {
  const { route } = lane;
  if (route.remoteDns) return host;
  if (!route.judged) return checked;
  return route.address.scheme === 'socks5' ? checked : host;
}

/** CONNECT and Upgrade on a lane: a tunnel through its proxy, or null (answered on `socket`). */
export async function tunnelVia(
  ctx: ProxyContext,
  lane: LaneState,
  socket: Duplex,
  target: { host: string; port: number },
): Promise<Socket | null> {
  const verdict = await judge(ctx, lane, target.host, target.port);
  if (socket.destroyed) return null;
  if (!verdict.ok) {
    refuseSocket(socket, verdict);
    return null;
  }
  if (tooBusy(ctx)) {
    rawResponse(socket, 503, {}, 'egress proxy busy\n');
    return null;
  }
  try {
    const upstream = await tunnelThrough(ctx, lane.route, {
      host: given(lane, target.host, verdict.dest.address),
      port: target.port,
    });
    if (socket.destroyed || ctx.closing) {
      upstream.destroy();
      return null;
    }
    return upstream;
  } catch (err) {
    const reason = failed(ctx, lane, err);
    rawResponse(socket, 502, proxyFailed(reason), `${reason}\n`);
    return null;
  }
}

/**
 * A plain http: request on a lane: absolute-form to an HTTP proxy (with its credentials), or
 * through a SOCKS tunnel in origin form. A 407 from an HTTP proxy is its failure, not the
 * target's answer.
 */
export async function forwardVia(
  ctx: ProxyContext,
  lane: LaneState,
  exchange: { req: IncomingMessage; res: ServerResponse; url: URL; port: number },
): Promise<void> {
  const { req, res, url, port } = exchange;
  const way = await openWay(ctx, lane, exchange);
  if (way === null) return;
  const { socket, viaHttp, target } = way;
  const { route } = lane;
  const headers = forwardableHeaders(req.rawHeaders, false);
  headers.unshift('Host', url.host);
  const auth = viaHttp ? proxyAuthorization(route.address) : null;
  if (auth !== null) headers.push('Proxy-Authorization', auth);
  const authority = `${isIP(target) === 6 ? `[${target}]` : target}:${port}`;
  const upReq = httpRequest({
    method: req.method,
    path: viaHttp
      ? `http://${authority}${url.pathname}${url.search}`
      : `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    createConnection: () => socket,
  });
  // Chromium cancels requests all the time: what fails after it left is nobody's failure.
  let left = false;
  // Through an HTTP proxy nothing tells its silence from the target's: a head that does not
  // come within the proxy's bound is the proxy's timeout (docs/proxies.md).
  // (Through a SOCKS tunnel the proxy has answered already: the target's pace is its own.)
  const timer = viaHttp
    ? setTimeout(() => upReq.destroy(new ProxyFailure('proxy timed out')), ctx.proxyTimeoutMs)
    : undefined;
  upReq.on('error', (err) => {
    clearTimeout(timer);
    if (left || res.destroyed) return;
    if (!viaHttp && !(err instanceof ProxyFailure)) {
      sendText(res, 502, `could not reach ${url.host}\n`, UNREACHABLE);
      return;
    }
    const failure =
      err instanceof ProxyFailure ? err : new ProxyFailure('proxy closed the connection');
    const reason = failed(ctx, lane, failure);
    sendText(res, 502, `${reason}\n`, proxyFailed(reason));
  });
  upReq.on('response', (upRes) => {
    clearTimeout(timer);
    if (viaHttp && upRes.statusCode === 407) {
      upRes.resume();
      const reason = failed(ctx, lane, new ProxyFailure('proxy authentication failed'));
      sendText(res, 502, `${reason}\n`, proxyFailed(reason));
      return;
    }
    streamAnswer(res, upRes);
  });
  res.on('close', () => {
    if (res.writableFinished) return;
    left = true;
    clearTimeout(timer);
    upReq.destroy();
  });
  req.on('error', () => upReq.destroy());
  req.pipe(upReq);
}

/**
 * A plain request's way out on a lane: judged, then a connection to the HTTP proxy or a
 * tunnel through the SOCKS one; null when the answer was given on `res` (refused, busy,
 * failed upstream).
 */
async function openWay(
  ctx: ProxyContext,
  lane: LaneState,
  exchange: { res: ServerResponse; url: URL; port: number },
): Promise<{ socket: Socket; viaHttp: boolean; target: string } | null> {
  const { res, url, port } = exchange;
  const verdict = await judge(ctx, lane, url.hostname, port);
  if (res.destroyed) return null;
  if (!verdict.ok) {
    refuseRequest(res, verdict);
    return null;
  }
  if (tooBusy(ctx)) {
    sendText(res, 503, 'egress proxy busy\n');
    return null;
  }
  const { route } = lane;
  const viaHttp = route.address.scheme === 'http' || route.address.scheme === 'https';
  const target = given(lane, url.hostname, verdict.dest.address);
  try {
    const socket = viaHttp
      ? await connectToProxy(ctx, route)
      : await tunnelThrough(ctx, route, { host: target, port });
    return { socket, viaHttp, target };
  } catch (err) {
    const reason = failed(ctx, lane, err);
    sendText(res, 502, `${reason}\n`, proxyFailed(reason));
    return null;
  }
}

/** Records an upstream failure on the lane and logs it by the route's name alone. */
function failed(ctx: ProxyContext, lane: LaneState, err: unknown): string {
  const reason = err instanceof ProxyFailure ? err.message : 'proxy failed';
  lane.failure = reason;
  ctx.logger.warn({ proxy: lane.route.name, reason }, 'upstream proxy failed');
  return reason;
}
