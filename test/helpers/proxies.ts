/**
 * Loopback stand-ins for the upstream proxies a capture can be sent through: an HTTP proxy
 * (optionally with Basic auth, optionally spoken to over TLS) and a SOCKS5 proxy (optionally
 * with username/password). Each records what it was asked to carry, so a test can assert that
 * traffic went through it, with which credentials and to which target.
 *
 * They only ever connect onward to loopback addresses, and never resolve a name through DNS:
 * a target anywhere else is refused (502 for HTTP, reply 0x02 for SOCKS), so a test cannot
 * reach past this machine even by mistake.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer as createHttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  connect,
  createServer as createNetServer,
  isIPv4,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex, Readable } from 'node:stream';

export interface ProxyCredentials {
  username: string;
  password: string;
}

/**
 * `normal` carries traffic; `hang` accepts connections and never sends a byte (not even a TLS
 * handshake), a proxy that has wedged; `refuse` answers every tunnel or request with a refusal
 * (HTTP 403, SOCKS reply 0x02) after checking credentials.
 */
export type ProxyMode = 'normal' | 'hang' | 'refuse';

export interface ProxyOptions {
  auth?: ProxyCredentials;
  mode?: ProxyMode;
  /** Extra names the proxy may connect to, each mapped to a loopback address. */
  hosts?: Record<string, string>;
}

export interface HttpProxyOptions extends ProxyOptions {
  /** Listen with TLS: an `https://` proxy, spoken to in TLS before CONNECT or a request. */
  tls?: { key: string | Buffer; cert: string | Buffer };
}

export type Socks5ProxyOptions = ProxyOptions;

export type AddressType = 'domain' | 'ipv4' | 'ipv6';

export interface ProxyRecord {
  /** `auth-failed` is a refusal for missing or wrong credentials, whatever was asked. */
  kind: 'connect' | 'request' | 'socks-connect' | 'auth-failed';
  /**
   * `host:port` (`[v6]:port` for IPv6) for a tunnel, the absolute URL for a plain request.
   * Empty for a SOCKS `auth-failed`: SOCKS authenticates before the client names a target.
   */
  target: string;
  /** How a SOCKS client named its target (its ATYP); absent for HTTP. */
  addressType?: AddressType;
  /** Whether the credentials check let it through (always true when the proxy has no auth). */
  authorized: boolean;
  /** `Date.now()` when the proxy read the request. */
  at: number;
}

export interface TestProxy {
  /**
   * `http://user:pass@127.0.0.1:PORT` (scheme `https` with `tls`, `socks5` for SOCKS), the
   * credentials percent-encoded and absent when the proxy has no `auth`.
   */
  url: string;
  host: string;
  port: number;
  /** What the proxy was asked to carry, in order; a live array. */
  records: ProxyRecord[];
  /** TCP connections accepted: lets a test of a silent proxy see its client got this far. */
  readonly connections: number;
  /** Destroys every open socket, client and onward side, then stops listening. */
  close(): Promise<void>;
}

export interface TestCertificate {
  key: string;
  cert: string;
  /** The certificate itself: it is self-signed, so a client trusts it with `{ ca }`. */
  ca: string;
}

const LOOPBACK = '127.0.0.1';
const BASIC_CHALLENGE = 'Basic realm="test"';
/** A cold `openssl req` making an RSA key takes well under a second; this is a hang guard. */
const OPENSSL_TIMEOUT_MS = 30_000;
/** Hop-by-hop headers (RFC 9110 7.6.1) and the proxy's own, which stop at the proxy. */
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

interface Endpoint {
  host: string;
  port: number;
}

/** What both kinds of proxy share: settings, the log, and every socket close() must end. */
interface ProxyState {
  readonly auth: ProxyCredentials | undefined;
  readonly mode: ProxyMode;
  readonly hosts: ReadonlyMap<string, string>;
  readonly records: ProxyRecord[];
  readonly sockets: Set<Duplex>;
  connections: number;
}

/**
 * An HTTP forward proxy on 127.0.0.1: CONNECT tunnels for https targets and absolute-form
 * requests (`GET http://host:port/path`) for plain ones, with `407` and a Basic challenge when
 * `auth` is set and the request lacks the right `Proxy-Authorization`.
 */
export async function startHttpProxy(options: HttpProxyOptions = {}): Promise<TestProxy> {
  const state = proxyState(options);
  const server = state.mode === 'hang' ? silentServer(state) : httpProxyServer(state, options);
  const port = await listenOnLoopback(server);
  return testProxy({ scheme: options.tls ? 'https' : 'http', server, port, state });
}

/**
 * A SOCKS5 proxy on 127.0.0.1 (RFC 1928, CONNECT only), offering only username/password
 * (RFC 1929) when `auth` is set and only "no authentication" otherwise.
 */
export async function startSocks5Proxy(options: Socks5ProxyOptions = {}): Promise<TestProxy> {
  const state = proxyState(options);
  const server =
    state.mode === 'hang'
      ? silentServer(state)
      : createNetServer((client) => {
          accept(state, client);
          socksSession(state, client).catch(() => client.destroy());
        });
  const port = await listenOnLoopback(server);
  return testProxy({ scheme: 'socks5', server, port, state });
}

/** Whether `openssl` runs here: node:crypto makes keys but not certificates. */
export function opensslAvailable(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore', timeout: OPENSSL_TIMEOUT_MS });
    return true;
  } catch {
    return false;
  }
}

/**
 * A self-signed certificate for `localhost` and 127.0.0.1, valid two days, for TLS proxies and
 * https targets. Made in a temporary directory that is removed before returning.
 */
export function makeTestCertificate(): TestCertificate {
  const dir = mkdtempSync(join(tmpdir(), 'shotsmith-cert-'));
  try {
    const keyPath = join(dir, 'key.pem');
    const certPath = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        keyPath,
        '-out',
        certPath,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: OPENSSL_TIMEOUT_MS },
    );
    const cert = readFileSync(certPath, 'utf8');
    return { key: readFileSync(keyPath, 'utf8'), cert, ca: cert };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Exactly `n` bytes from a stream in paused mode, leaving whatever follows them buffered for
 * the next reader (a pipe, once a handshake is done). Rejects if the stream ends first. For
 * hand-written protocol code: the SOCKS server here and the clients in tests.
 */
export function readBytes(stream: Readable, n: number): Promise<Buffer> {
  if (n === 0) return Promise.resolve(Buffer.alloc(0));
  if (stream.readableEnded || stream.destroyed) {
    return Promise.reject(new Error(`stream closed before ${n} bytes`));
  }
  return new Promise((resolve, reject) => {
    const stop = () => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('close', onEnd);
    };
    const onEnd = () => {
      stop();
      reject(new Error(`stream closed before ${n} bytes`));
    };
    const onReadable = () => {
      // At the end of the stream read(n) hands over what is left, even if short.
      const bytes: Buffer | null = stream.read(n);
      if (bytes === null) return;
      stop();
      if (bytes.length === n) resolve(bytes);
      else reject(new Error(`stream closed after ${bytes.length} of ${n} bytes`));
    };
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('close', onEnd);
    onReadable();
  });
}

function proxyState(options: ProxyOptions): ProxyState {
  const hosts = new Map<string, string>();
  for (const [name, address] of Object.entries(options.hosts ?? {})) {
    if (!isLoopbackLiteral(address)) {
      throw new Error(`hosts: ${name} maps to ${address}, which is not a loopback address`);
    }
    hosts.set(name.toLowerCase(), address);
  }
  return {
    auth: options.auth,
    mode: options.mode ?? 'normal',
    hosts,
    records: [],
    sockets: new Set(),
    connections: 0,
  };
}

function testProxy(input: {
  scheme: 'http' | 'https' | 'socks5';
  server: NetServer;
  port: number;
  state: ProxyState;
}): TestProxy {
  const { scheme, server, port, state } = input;
  const credentials = state.auth
    ? `${encodeURIComponent(state.auth.username)}:${encodeURIComponent(state.auth.password)}@`
    : '';
  let closing: Promise<void> | undefined;
  return {
    url: `${scheme}://${credentials}${LOOPBACK}:${port}`,
    host: LOOPBACK,
    port,
    records: state.records,
    get connections() {
      return state.connections;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        // server.close() waits for every connection, so none may be left open.
        server.close(() => resolve());
        for (const socket of state.sockets) socket.destroy();
      });
      return closing;
    },
  };
}

async function listenOnLoopback(server: NetServer): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, LOOPBACK, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** Counts and tracks a client connection the moment it is accepted. */
function accept(state: ProxyState, socket: Socket): void {
  state.connections++;
  track(state, socket);
}

function track(state: ProxyState, socket: Duplex): void {
  state.sockets.add(socket);
  socket.once('close', () => state.sockets.delete(socket));
  // A peer that resets is part of a test, not a crash of the test process.
  socket.on('error', () => {});
}

function record(state: ProxyState, entry: Omit<ProxyRecord, 'at'>): void {
  state.records.push({ ...entry, at: Date.now() });
}

/** Accepts and then says nothing at all, not even a TLS handshake: a proxy that has wedged. */
function silentServer(state: ProxyState): NetServer {
  return createNetServer((socket) => accept(state, socket));
}

function isLoopbackLiteral(address: string): boolean {
  return (isIPv4(address) && address.startsWith('127.')) || address === '::1';
}

/**
 * The loopback address a target host may be reached at, or null: a loopback literal as it is,
 * `localhost`, or a name from the `hosts` option.
 */
function onwardAddress(state: ProxyState, host: string): string | null {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (isLoopbackLiteral(name)) return name;
  if (name === 'localhost') return LOOPBACK;
  return state.hosts.get(name) ?? null;
}

/** Pipes both ways; an error on either side resets the other, an end ends it after flushing. */
function splice(a: Duplex, b: Duplex): void {
  a.pipe(b);
  b.pipe(a);
  a.once('error', () => b.destroy());
  b.once('error', () => a.destroy());
  a.once('close', () => {
    if (!b.destroyed) b.end();
  });
  b.once('close', () => {
    if (!a.destroyed) a.end();
  });
}

// HTTP proxy

function httpProxyServer(state: ProxyState, options: HttpProxyOptions): NetServer {
  const onRequest = (req: IncomingMessage, res: ServerResponse) => forwardRequest(state, req, res);
  const server = options.tls
    ? createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, onRequest)
    : createHttpServer(onRequest);
  server.on('connection', (socket: Socket) => accept(state, socket));
  // Over TLS the CONNECT socket is the TLS one, not the TCP one accepted above.
  server.on('secureConnection', (socket: Duplex) => track(state, socket));
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) =>
    openTunnel(state, req, client, head),
  );
  return server;
}

/** Checks credentials, records the request, and says whether to refuse it, and how. */
function admit(
  state: ProxyState,
  input: { kind: 'connect' | 'request'; target: string; headers: IncomingHttpHeaders },
): 407 | 403 | null {
  if (state.auth && !hasCredentials(input.headers['proxy-authorization'], state.auth)) {
    record(state, { kind: 'auth-failed', target: input.target, authorized: false });
    return 407;
  }
  record(state, { kind: input.kind, target: input.target, authorized: true });
  return state.mode === 'refuse' ? 403 : null;
}

function hasCredentials(header: string | undefined, auth: ProxyCredentials): boolean {
  const token = /^Basic\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (token === undefined) return false;
  // A Basic username cannot hold a colon, so the pair compares as one string.
  return Buffer.from(token, 'base64').toString('utf8') === `${auth.username}:${auth.password}`;
}

/** `host:port` or `[v6]:port`, as a CONNECT line names its target. */
function parseHostPort(target: string): Endpoint | null {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  return host !== undefined && port >= 1 && port <= 65_535 ? { host, port } : null;
}

/** Where a CONNECT may go, or the status that refuses it. */
function tunnelEndpoint(state: ProxyState, req: IncomingMessage): Endpoint | number {
  const target = req.url ?? '';
  const refusal = admit(state, { kind: 'connect', target, headers: req.headers });
  if (refusal !== null) return refusal;
  const endpoint = parseHostPort(target);
  if (endpoint === null) return 400;
  const address = onwardAddress(state, endpoint.host);
  return address === null ? 502 : { host: address, port: endpoint.port };
}

function openTunnel(state: ProxyState, req: IncomingMessage, client: Duplex, head: Buffer): void {
  const endpoint = tunnelEndpoint(state, req);
  if (typeof endpoint === 'number') {
    refuseTunnel(client, endpoint);
    return;
  }
  const upstream = connect(endpoint);
  track(state, upstream);
  let established = false;
  upstream.once('connect', () => {
    established = true;
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    splice(client, upstream);
  });
  upstream.on('error', () => {
    if (!established) refuseTunnel(client, 502);
  });
}

/** The HTTP parser has let go of a CONNECT socket, so the answer is written by hand. */
function refuseTunnel(client: Duplex, status: number): void {
  const challenge = status === 407 ? `Proxy-Authenticate: ${BASIC_CHALLENGE}\r\n` : '';
  client.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${challenge}` +
      'Content-Length: 0\r\nConnection: close\r\n\r\n',
  );
}

/** Where an absolute-form request may go, or the status that refuses it. */
function requestEndpoint(
  state: ProxyState,
  req: IncomingMessage,
): (Endpoint & { path: string }) | number {
  const target = req.url ?? '';
  const refusal = admit(state, { kind: 'request', target, headers: req.headers });
  if (refusal !== null) return refusal;
  const url = URL.parse(target);
  if (url?.protocol !== 'http:') return 400;
  const address = onwardAddress(state, url.hostname);
  if (address === null) return 502;
  return { host: address, port: Number(url.port || 80), path: `${url.pathname}${url.search}` };
}

function forwardRequest(state: ProxyState, req: IncomingMessage, res: ServerResponse): void {
  const endpoint = requestEndpoint(state, req);
  if (typeof endpoint === 'number') {
    refuseRequest(res, endpoint);
    return;
  }
  const upstream = httpRequest({
    ...endpoint,
    method: req.method,
    headers: endToEnd(req.headers),
    // One connection per request, so nothing idles in a shared pool after close().
    agent: false,
  });
  upstream.on('socket', (socket: Socket) => track(state, socket));
  upstream.once('response', (answer) => {
    answer.on('error', () => res.destroy());
    res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
    answer.pipe(res);
  });
  upstream.on('error', () => {
    if (res.headersSent) res.destroy();
    else refuseRequest(res, 502);
  });
  res.once('close', () => upstream.destroy());
  req.pipe(upstream);
}

function refuseRequest(res: ServerResponse, status: number): void {
  const challenge = status === 407 ? { 'proxy-authenticate': BASIC_CHALLENGE } : {};
  res.writeHead(status, { ...challenge, 'content-length': 0 }).end();
}

/** Node frames the body itself, so the framing and hop-by-hop headers are dropped. */
function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

// SOCKS5 proxy

const SOCKS_VERSION = 0x05;
const METHOD = { none: 0x00, userPass: 0x02, noAcceptable: 0xff } as const;
const USER_PASS_VERSION = 0x01;
const COMMAND_CONNECT = 0x01;
const REPLY = {
  succeeded: 0x00,
  generalFailure: 0x01,
  notAllowed: 0x02,
  networkUnreachable: 0x03,
  hostUnreachable: 0x04,
  connectionRefused: 0x05,
  commandNotSupported: 0x07,
  addressTypeNotSupported: 0x08,
} as const;
const ATYP = { ipv4: 0x01, domain: 0x03, ipv6: 0x04 } as const;

type SocksRequest = (Endpoint & { addressType: AddressType; target: string }) | { reply: number };

async function socksSession(state: ProxyState, client: Socket): Promise<void> {
  if (!(await negotiate(state, client))) return;
  const endpoint = socksEndpoint(state, await readSocksRequest(client));
  if (typeof endpoint === 'number') client.end(socksReply(endpoint));
  else connectOnward(state, client, endpoint);
}

/** Where a SOCKS CONNECT may go, or the reply code that refuses it. */
function socksEndpoint(state: ProxyState, request: SocksRequest): Endpoint | number {
  if ('reply' in request) return request.reply;
  const { host, port, addressType, target } = request;
  record(state, { kind: 'socks-connect', target, addressType, authorized: true });
  if (state.mode === 'refuse') return REPLY.notAllowed;
  if (addressType === 'ipv6' && host !== '::1') return REPLY.addressTypeNotSupported;
  const address = onwardAddress(state, host);
  return address === null ? REPLY.notAllowed : { host: address, port };
}

/** RFC 1928 method selection, then RFC 1929 username/password when the proxy has `auth`. */
async function negotiate(state: ProxyState, client: Socket): Promise<boolean> {
  const greeting = await readBytes(client, 2);
  if (greeting.readUInt8(0) !== SOCKS_VERSION) {
    client.destroy();
    return false;
  }
  const offered = await readBytes(client, greeting.readUInt8(1));
  const method = state.auth ? METHOD.userPass : METHOD.none;
  if (!offered.includes(method)) {
    if (state.auth) record(state, { kind: 'auth-failed', target: '', authorized: false });
    client.end(Buffer.from([SOCKS_VERSION, METHOD.noAcceptable]));
    return false;
  }
  client.write(Buffer.from([SOCKS_VERSION, method]));
  if (!state.auth) return true;
  const head = await readBytes(client, 2);
  const username = (await readBytes(client, head.readUInt8(1))).toString('utf8');
  const passwordLength = (await readBytes(client, 1)).readUInt8(0);
  const password = (await readBytes(client, passwordLength)).toString('utf8');
  const accepted =
    head.readUInt8(0) === USER_PASS_VERSION &&
    username === state.auth.username &&
    password === state.auth.password;
  if (!accepted) {
    record(state, { kind: 'auth-failed', target: '', authorized: false });
    // RFC 1929: on failure the server must close the connection.
    client.end(Buffer.from([USER_PASS_VERSION, 0x01]));
    return false;
  }
  client.write(Buffer.from([USER_PASS_VERSION, 0x00]));
  return true;
}

async function readSocksRequest(client: Socket): Promise<SocksRequest> {
  const head = await readBytes(client, 4);
  if (head.readUInt8(0) !== SOCKS_VERSION) return { reply: REPLY.generalFailure };
  const named = await readSocksAddress(client, head.readUInt8(3));
  if (named === null) return { reply: REPLY.addressTypeNotSupported };
  const port = (await readBytes(client, 2)).readUInt16BE(0);
  if (head.readUInt8(1) !== COMMAND_CONNECT) return { reply: REPLY.commandNotSupported };
  const { host, addressType } = named;
  const target = addressType === 'ipv6' ? `[${host}]:${port}` : `${host}:${port}`;
  return { host, port, addressType, target };
}

async function readSocksAddress(
  client: Socket,
  atyp: number,
): Promise<{ host: string; addressType: AddressType } | null> {
  if (atyp === ATYP.ipv4) {
    return { host: [...(await readBytes(client, 4))].join('.'), addressType: 'ipv4' };
  }
  if (atyp === ATYP.domain) {
    const length = (await readBytes(client, 1)).readUInt8(0);
    return { host: (await readBytes(client, length)).toString('utf8'), addressType: 'domain' };
  }
  if (atyp === ATYP.ipv6) {
    return { host: ipv6Text(await readBytes(client, 16)), addressType: 'ipv6' };
  }
  return null;
}

/** The canonical text of 16 address bytes (`::1`), compressed by the WHATWG URL parser. */
function ipv6Text(bytes: Buffer): string {
  const groups = Array.from({ length: 8 }, (_, i) => bytes.readUInt16BE(i * 2).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

function connectOnward(state: ProxyState, client: Socket, endpoint: Endpoint): void {
  const upstream = connect(endpoint);
  track(state, upstream);
  let established = false;
  upstream.once('connect', () => {
    established = true;
    client.write(
      socksReply(REPLY.succeeded, {
        address: upstream.localAddress ?? '',
        port: upstream.localPort ?? 0,
      }),
    );
    splice(client, upstream);
  });
  upstream.on('error', (error: NodeJS.ErrnoException) => {
    if (!established) client.end(socksReply(replyFor(error)));
  });
}

function replyFor(error: NodeJS.ErrnoException): number {
  if (error.code === 'ECONNREFUSED') return REPLY.connectionRefused;
  if (error.code === 'ENETUNREACH') return REPLY.networkUnreachable;
  if (error.code === 'EHOSTUNREACH') return REPLY.hostUnreachable;
  return REPLY.generalFailure;
}

/**
 * A reply with BND.ADDR and BND.PORT: the proxy's own end of the onward connection, zeros on
 * a failure. Onward connections only go to loopback, so that end is in 127/8 or is ::1.
 */
function socksReply(code: number, bound?: { address: string; port: number }): Buffer {
  const port = Buffer.alloc(2);
  port.writeUInt16BE(bound?.port ?? 0);
  if (bound?.address === '::1') {
    const address = Buffer.alloc(16);
    address[15] = 1;
    return Buffer.concat([Buffer.from([SOCKS_VERSION, code, 0x00, ATYP.ipv6]), address, port]);
  }
  const ipv4 = bound && isIPv4(bound.address) ? bound.address.split('.').map(Number) : [0, 0, 0, 0];
  return Buffer.concat([Buffer.from([SOCKS_VERSION, code, 0x00, ATYP.ipv4, ...ipv4]), port]);
}
