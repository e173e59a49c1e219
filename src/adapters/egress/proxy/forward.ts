import type { IncomingMessage, ServerResponse } from 'node:http';
import { request as httpRequest } from 'node:http';
import type { CheckedDestination } from '../policy.ts';
import { type ProxyContext, tooBusy } from './context.ts';
import { checkTarget } from './destination.ts';
import { forwardVia, laneFor } from './lanes.ts';
import { forwardableHeaders, parseAbsoluteTarget, targetPort } from './parse.ts';
import { refuseRequest, sendText, streamAnswer, UNREACHABLE } from './responses.ts';
import { noLookup } from './upstream.ts';

/**
 * An absolute-form plain request (`GET http://host/x`, every http: subresource): forwarded to
 * the checked address with hop-by-hop headers dropped, the response streamed back.
 */
export async function forwardRequest(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = parseAbsoluteTarget(req.url);
  if (!url) {
    sendText(res, 400, 'not a proxy request\n');
    return;
  }
  const port = targetPort(url);
  const lane = laneFor(ctx, req.socket, url.hostname);
  if (lane !== null) {
    await forwardVia(ctx, lane, { req, res, url, port });
    return;
  }
  const verdict = await checkTarget(ctx, url.hostname, port);
  if (res.destroyed) return;
  if (ctx.closing) {
    res.destroy();
    return;
  }
  if (!verdict.ok) {
    refuseRequest(res, verdict);
    return;
  }
  if (tooBusy(ctx)) {
    sendText(res, 503, 'egress proxy busy\n');
    return;
  }
  pipeUpstream(ctx, req, res, { url, port, dest: verdict.dest });
}

/** Sends the request on to the checked address and streams the answer back. */
function pipeUpstream(
  ctx: ProxyContext,
  req: IncomingMessage,
  res: ServerResponse,
  target: { url: URL; port: number; dest: CheckedDestination },
): void {
  const { url, port, dest } = target;
  const headers = forwardableHeaders(req.rawHeaders, false);
  headers.unshift('Host', url.host);
  const upReq = httpRequest({
    host: dest.address,
    family: dest.family,
    port,
    method: req.method,
    path: `${url.pathname}${url.search}`,
    headers,
    setHost: false,
    agent: false,
    lookup: noLookup,
  });
  let connectTimer: NodeJS.Timeout | undefined;
  upReq.on('socket', (socket) => {
    ctx.upstreams.add(socket);
    socket.once('close', () => ctx.upstreams.delete(socket));
    socket.setTimeout(ctx.idleTimeoutMs, () => upReq.destroy(new Error('upstream idle timeout')));
    connectTimer = setTimeout(
      () => upReq.destroy(new Error(`connect timeout after ${ctx.connectTimeoutMs} ms`)),
      ctx.connectTimeoutMs,
    );
    socket.once('connect', () => clearTimeout(connectTimer));
    socket.once('close', () => clearTimeout(connectTimer));
  });
  upReq.on('error', (err) => {
    clearTimeout(connectTimer);
    ctx.logger.debug({ err: err.message, host: url.host }, 'egress upstream request failed');
    sendText(res, 502, `could not connect to ${url.host}\n`, UNREACHABLE);
  });
  upReq.on('response', (upRes) => streamAnswer(res, upRes));
  res.on('close', () => {
    if (!res.writableFinished) upReq.destroy();
  });
  req.on('error', () => upReq.destroy());
  req.pipe(upReq);
}
