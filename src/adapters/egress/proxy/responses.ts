/**
 * The answers the proxy itself gives, rather than a destination: refusals (403 with
 * `x-egress-refused`), unreachable destinations (502 marked `x-egress-error: unreachable`),
 * busy (503) and malformed requests (400, 408, 431). On a raw socket (CONNECT, Upgrade,
 * client errors) they are written by hand and the connection closes; on a plain request they
 * go through the ServerResponse.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Verdict } from './destination.ts';
import { forwardableHeaders } from './parse.ts';

const STATUS_TEXT: Record<number, string> = {
  200: 'Connection Established',
  400: 'Bad Request',
  403: 'Forbidden',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** Marks the proxy's own 502s so the renderer can tell them from a target's 502 page. */
export const UNREACHABLE: Readonly<Record<string, string>> = { 'x-egress-error': 'unreachable' };

type Refusal = Extract<Verdict, { ok: false }>;

/** A refused destination names its reason; one that could not be reached says so. */
const refusalHeaders = (refusal: Refusal): Record<string, string> =>
  refusal.status === 403 ? { 'x-egress-refused': refusal.reason } : { ...UNREACHABLE };

/** Printable ASCII only, bounded: safe as a header value. */
function headerSafe(text: string): string {
  let out = '';
  for (const ch of text.slice(0, 300)) {
    const c = ch.charCodeAt(0);
    out += c >= 0x20 && c < 0x7f ? ch : '?';
  }
  return out;
}

/** A complete response written on a raw socket, which then closes. */
export function rawResponse(
  socket: Duplex,
  status: number,
  extraHeaders: Record<string, string> = {},
  body = '',
): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const lines = [`HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}`];
  for (const [k, v] of Object.entries(extraHeaders)) lines.push(`${k}: ${headerSafe(v)}`);
  if (body !== '') lines.push('Content-Type: text/plain; charset=utf-8');
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close', '', body);
  socket.end(lines.join('\r\n'));
  // The peer normally closes on "Connection: close"; do not wait for it forever.
  const timer = setTimeout(() => socket.destroy(), 2000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/** A short text answer to a plain request; a response already under way is cut instead. */
export function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  extra: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const headers: Record<string, string> = {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  for (const [k, v] of Object.entries(extra)) headers[k] = headerSafe(v);
  res.writeHead(status, headers);
  res.end(body);
}

/** Refuses a CONNECT or Upgrade whose destination did not pass the check. */
export function refuseSocket(socket: Duplex, refusal: Refusal): void {
  rawResponse(socket, refusal.status, refusalHeaders(refusal), `${refusal.reason}\n`);
}

/** Refuses a plain request whose destination did not pass the check. */
export function refuseRequest(res: ServerResponse, refusal: Refusal): void {
  const label = refusal.status === 403 ? 'egress refused' : 'bad gateway';
  sendText(res, refusal.status, `${label}: ${refusal.reason}\n`, refusalHeaders(refusal));
}

/**
 * An upstream's answer streamed back to the client, hop-by-hop headers (and the proxy's own
 * marks) dropped; the direct path's and a lane's alike.
 */
export function streamAnswer(res: ServerResponse, upRes: IncomingMessage): void {
  upRes.on('error', () => res.destroy());
  if (res.destroyed) {
    upRes.destroy();
    return;
  }
  res.writeHead(
    upRes.statusCode ?? 502,
    upRes.statusMessage,
    forwardableHeaders(upRes.rawHeaders, false),
  );
  upRes.pipe(res);
}
