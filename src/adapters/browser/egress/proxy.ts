/**
 * In-process HTTP forward proxy that every connection of the rendered page goes through
 * (Chromium: `--proxy-server=<url> --proxy-bypass-list=<-loopback>`). For each CONNECT tunnel,
 * absolute-URI request or plain-HTTP Upgrade it resolves the host once (checkDestination), then
 * connects to the CHECKED address, never to the name, so DNS rebinding has no window.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpRequest } from 'node:http';
import type { LookupFunction } from 'node:net';
import { connect as netConnect, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isAppError } from '../../../domain/errors.ts';
import { canonicalIp, classifyAddress } from './address.ts';
import type { CheckedDestination, EgressPolicy } from './policy.ts';
import { checkDestination } from './policy.ts';

export interface EgressLogger {
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface EgressRefusal {
  host: string;
  port: number;
  reason: string;
}

export interface EgressProxyOptions {
  policy: EgressPolicy;
  /** Loopback address to listen on. Default 127.0.0.1. Anything not loopback throws. */
  host?: string;
  /** Port to listen on. Default 0 (an ephemeral port). */
  port?: number;
  logger?: EgressLogger;
  onRefused?: (info: EgressRefusal) => void;
  /** Upstream TCP connect timeout. Default 10 s. */
  connectTimeoutMs?: number;
  /** A client or upstream socket idle this long is closed. Default 120 s. */
  idleTimeoutMs?: number;
  /** Concurrent client connections, and concurrent upstream connections. Default 256. */
  maxConnections?: number;
  /** Largest request head accepted (request line plus headers). Default 16 KiB. */
  maxHeaderSize?: number;
}

export interface EgressStats {
  /** Destinations checked and let through. */
  allowed: number;
  /** Destinations refused by the policy. */
  refused: number;
  /** Upstream connections open now (tunnels, upgrades and in-flight plain requests). */
  open: number;
}

export interface EgressProxy {
  /** `http://127.0.0.1:PORT`, for `--proxy-server`. */
  readonly url: string;
  readonly port: number;
  stats(): EgressStats;
  /** Stops listening and destroys every open client and upstream socket. */
  close(): Promise<void>;
}

/** Connection-level headers a proxy must not forward (RFC 9110 section 7.6.1). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const STATUS_TEXT: Record<number, string> = {
  200: 'Connection Established',
  400: 'Bad Request',
  403: 'Forbidden',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** Connections only ever go to checked literal addresses; a name reaching a socket is a bug. */
const noLookup: LookupFunction = (hostname, _options, callback) => {
  const err = Object.assign(new Error(`egress proxy refuses to resolve ${hostname}`), {
    code: 'ENOTFOUND',
  });
  callback(err, '', 0);
};

/** Printable ASCII only, bounded: safe as a header value. */
function headerSafe(text: string): string {
  let out = '';
  for (const ch of text.slice(0, 300)) {
    const c = ch.charCodeAt(0);
    out += c >= 0x20 && c < 0x7f ? ch : '?';
  }
  return out;
}

/** Splits a CONNECT authority (`host:port`, `[v6]:port`). null when malformed. */
function parseAuthority(authority: string | undefined): { host: string; port: number } | null {
  if (!authority || authority.length > 300) return null;
  let host: string;
  let portText: string;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1 || authority[close + 1] !== ':') return null;
    host = authority.slice(0, close + 1);
    portText = authority.slice(close + 2);
  } else {
    const colon = authority.lastIndexOf(':');
    if (colon <= 0) return null;
    host = authority.slice(0, colon);
    portText = authority.slice(colon + 1);
    if (host.includes(':')) return null;
  }
  if (portText.length === 0 || portText.length > 5) return null;
  for (let i = 0; i < portText.length; i++) {
    const c = portText.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  return { host, port };
}

/** The absolute-form target of a plain proxy request (`GET http://host/x`). null otherwise. */
function parseAbsoluteTarget(target: string | undefined): URL | null {
  if (!target?.toLowerCase().startsWith('http://')) return null;
  try {
    const url = new URL(target);
    return url.protocol === 'http:' && url.hostname !== '' ? url : null;
  } catch {
    return null;
  }
}

/** Raw header pairs without hop-by-hop fields, those named in Connection, and Host. */
function forwardableHeaders(raw: readonly string[], keepUpgrade: boolean): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if ((raw[i] ?? '').toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const lower = name.toLowerCase();
    if (lower === 'host') continue;
    const upgradeField = lower === 'connection' || lower === 'upgrade';
    if (!(keepUpgrade && upgradeField) && (HOP_BY_HOP.has(lower) || named.has(lower))) continue;
    out.push(name, raw[i + 1] as string);
  }
  return out;
}

/** Marks the proxy's own 502s so the renderer can tell them from a target's 502 page. */
export const UNREACHABLE: Readonly<Record<string, string>> = { 'x-egress-error': 'unreachable' };

function rawResponse(
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

type Verdict =
  | { ok: true; dest: CheckedDestination }
  | { ok: false; status: 403 | 502; reason: string };

/**
 * Starts the proxy on a loopback address. Refused destinations: CONNECT and Upgrade get a 403
 * and the connection closes; plain requests get a 403 text body with `x-egress-refused: <reason>`.
 * A name that does not resolve, or an upstream that cannot be reached: 502. A request that is
 * not a proxy request (origin-form `GET /x`) or is malformed: 400.
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const listenHost = options.host ?? '127.0.0.1';
  const listenAddress = canonicalIp(listenHost);
  if (listenAddress === null || classifyAddress(listenAddress).category !== 'loopback') {
    throw new Error(`egress proxy must listen on a loopback address, not ${listenHost}`);
  }
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 120_000;
  const maxConnections = options.maxConnections ?? 256;
  const logger = options.logger;

  const clients = new Set<Socket>();
  const upstreams = new Set<Socket>();
  let allowed = 0;
  let refused = 0;
  let ownPort = 0;
  let closing = false;

  // The proxy's own port is "self" too: a page must not loop requests through it.
  const policy = (): EgressPolicy => ({
    ...options.policy,
    selfPorts: [...options.policy.selfPorts, ownPort],
  });

  const check = async (host: string, port: number): Promise<Verdict> => {
    try {
      const dest = await checkDestination(policy(), host, port);
      allowed++;
      logger?.debug?.({ host, port, address: dest.address }, 'egress allowed');
      return { ok: true, dest };
    } catch (err) {
      if (isAppError(err) && err.code === 'url_not_allowed') {
        refused++;
        const info = { host, port, reason: err.message };
        logger?.warn(info, 'egress refused');
        try {
          options.onRefused?.(info);
        } catch (hookErr) {
          logger?.warn({ err: hookErr }, 'egress onRefused hook threw');
        }
        return { ok: false, status: 403, reason: err.message };
      }
      const reason = isAppError(err) ? err.message : 'destination check failed';
      // Names that do not resolve are routine for pages (ads, trackers): debug, not warn.
      logger?.debug?.({ host, port, reason }, 'egress destination unreachable');
      return { ok: false, status: 502, reason };
    }
  };

  /** TCP connection to a checked address, with a connect timeout. */
  const openUpstream = (dest: CheckedDestination, port: number): Promise<Socket> =>
    new Promise((resolve, reject) => {
      if (closing) {
        reject(new Error('egress proxy is closing'));
        return;
      }
      const socket = netConnect({
        host: dest.address,
        port,
        family: dest.family,
        lookup: noLookup,
      });
      upstreams.add(socket);
      socket.once('close', () => upstreams.delete(socket));
      const timer = setTimeout(
        () => socket.destroy(new Error(`connect timeout after ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      socket.on('error', (err) => {
        clearTimeout(timer);
        logger?.debug?.({ err: err.message, port }, 'egress upstream socket error');
        reject(err);
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(socket);
      });
    });

  /**
   * Pipes two sockets both ways. An error or idling on either destroys both; a clean close of
   * one ends the other once its pending writes are flushed (no truncated downloads).
   */
  const relay = (client: Duplex, upstream: Socket): void => {
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
    upstream.setTimeout(idleTimeoutMs, destroyBoth);
    if (client instanceof Socket) client.setTimeout(idleTimeoutMs, destroyBoth);
    client.pipe(upstream);
    upstream.pipe(client);
  };

  const tooBusy = (): boolean => upstreams.size >= maxConnections;

  const handleConnect = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const target = parseAuthority(req.url);
    if (!target) {
      rawResponse(socket, 400, {}, 'CONNECT needs host:port\n');
      return;
    }
    const verdict = await check(target.host, target.port);
    if (socket.destroyed) return;
    if (!verdict.ok) {
      const headers: Record<string, string> =
        verdict.status === 403
          ? { 'x-egress-refused': verdict.reason }
          : { 'x-egress-error': 'unreachable' };
      rawResponse(socket, verdict.status, headers, `${verdict.reason}\n`);
      return;
    }
    if (tooBusy()) {
      rawResponse(socket, 503, {}, 'egress proxy busy\n');
      return;
    }
    let upstream: Socket;
    try {
      upstream = await openUpstream(verdict.dest, target.port);
    } catch {
      rawResponse(socket, 502, UNREACHABLE, `could not connect to ${target.host}:${target.port}\n`);
      return;
    }
    if (socket.destroyed || closing) {
      upstream.destroy();
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    relay(socket, upstream);
  };

  const handleUpgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = parseAbsoluteTarget(req.url);
    if (!url) {
      rawResponse(socket, 400, {}, 'not a proxy request\n');
      return;
    }
    const port = url.port === '' ? 80 : Number(url.port);
    const verdict = await check(url.hostname, port);
    if (socket.destroyed) return;
    if (!verdict.ok) {
      const headers: Record<string, string> =
        verdict.status === 403
          ? { 'x-egress-refused': verdict.reason }
          : { 'x-egress-error': 'unreachable' };
      rawResponse(socket, verdict.status, headers, `${verdict.reason}\n`);
      return;
    }
    if (tooBusy()) {
      rawResponse(socket, 503, {}, 'egress proxy busy\n');
      return;
    }
    let upstream: Socket;
    try {
      upstream = await openUpstream(verdict.dest, port);
    } catch {
      rawResponse(socket, 502, UNREACHABLE, `could not connect to ${url.host}\n`);
      return;
    }
    if (socket.destroyed || closing) {
      upstream.destroy();
      return;
    }
    const headers = forwardableHeaders(req.rawHeaders, true);
    const lines = [`${req.method} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
    for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    relay(socket, upstream);
  };

  const sendText = (
    res: ServerResponse,
    status: number,
    body: string,
    extra: Record<string, string> = {},
  ) => {
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
  };

  const handleRequest = async (req: IncomingMessage, res: ServerResponse) => {
    const url = parseAbsoluteTarget(req.url);
    if (!url) {
      sendText(res, 400, 'not a proxy request\n');
      return;
    }
    const port = url.port === '' ? 80 : Number(url.port);
    const verdict = await check(url.hostname, port);
    if (res.destroyed) return;
    if (closing) {
      res.destroy();
      return;
    }
    if (!verdict.ok) {
      const extra: Record<string, string> =
        verdict.status === 403
          ? { 'x-egress-refused': verdict.reason }
          : { 'x-egress-error': 'unreachable' };
      const label = verdict.status === 403 ? 'egress refused' : 'bad gateway';
      sendText(res, verdict.status, `${label}: ${verdict.reason}\n`, extra);
      return;
    }
    if (tooBusy()) {
      sendText(res, 503, 'egress proxy busy\n');
      return;
    }
    const headers = forwardableHeaders(req.rawHeaders, false);
    headers.unshift('Host', url.host);
    const upReq = httpRequest({
      host: verdict.dest.address,
      family: verdict.dest.family,
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
      upstreams.add(socket);
      socket.once('close', () => upstreams.delete(socket));
      socket.setTimeout(idleTimeoutMs, () => upReq.destroy(new Error('upstream idle timeout')));
      connectTimer = setTimeout(
        () => upReq.destroy(new Error(`connect timeout after ${connectTimeoutMs} ms`)),
        connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(connectTimer));
      socket.once('close', () => clearTimeout(connectTimer));
    });
    upReq.on('error', (err) => {
      clearTimeout(connectTimer);
      logger?.debug?.({ err: err.message, host: url.host }, 'egress upstream request failed');
      sendText(res, 502, `could not connect to ${url.host}\n`, UNREACHABLE);
    });
    upReq.on('response', (upRes) => {
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
    });
    res.on('close', () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.on('error', () => upReq.destroy());
    req.pipe(upReq);
  };

  // A request head must arrive within headersTimeout (slow-loris); bodies and responses are
  // bounded by the idle timeout instead, so long downloads keep working.
  const headersTimeout = Math.min(idleTimeoutMs, 20_000);
  const server = createServer({
    maxHeaderSize: options.maxHeaderSize ?? 16 * 1024,
    requireHostHeader: false,
    headersTimeout,
    requestTimeout: 0,
    connectionsCheckingInterval: Math.min(1_000, headersTimeout),
    keepAliveTimeout: 5_000,
  });
  server.maxConnections = maxConnections;
  server.setTimeout(idleTimeoutMs);

  server.on('connection', (socket: Socket) => {
    clients.add(socket);
    socket.on('error', (err) => logger?.debug?.({ err: err.message }, 'egress client error'));
    socket.once('close', () => clients.delete(socket));
    if (closing) socket.destroy();
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
    handleRequest(req, res).catch((err: unknown) => {
      logger?.warn({ err: String(err) }, 'egress proxy request failed');
      sendText(res, 502, 'egress proxy error\n', UNREACHABLE);
    });
  });
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleConnect(req, socket, head).catch((err: unknown) => {
      logger?.warn({ err: String(err) }, 'egress proxy CONNECT failed');
      socket.destroy();
    });
  });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    handleUpgrade(req, socket, head).catch((err: unknown) => {
      logger?.warn({ err: String(err) }, 'egress proxy upgrade failed');
      socket.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listenAddress, port: options.port ?? 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => logger?.warn({ err: err.message }, 'egress proxy server error'));

  const address = server.address();
  ownPort = typeof address === 'object' && address !== null ? address.port : 0;
  const url = listenAddress.includes(':')
    ? `http://[${listenAddress}]:${ownPort}`
    : `http://${listenAddress}:${ownPort}`;

  let closed: Promise<void> | undefined;
  return {
    url,
    port: ownPort,
    stats: () => ({ allowed, refused, open: upstreams.size }),
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        for (const s of upstreams) s.destroy();
        for (const s of clients) s.destroy();
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
