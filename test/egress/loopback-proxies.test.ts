/**
 * The loopback proxies that the upstream-proxy tests stand on: each kind carries real traffic
 * to a real local server, refuses what it should, records both, and lets go of everything on
 * close(). The clients are written by hand (there is no SOCKS client library here), so each
 * step of a handshake is visible to the assertions.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { type FixtureSite, sleep, startSite } from '../helpers/fixtures.ts';
import {
  makeTestCertificate,
  opensslAvailable,
  type ProxyCredentials,
  type ProxyRecord,
  readBytes,
  startHttpProxy,
  startSocks5Proxy,
  type TestCertificate,
  type TestProxy,
} from '../helpers/proxies.ts';

/** A password with characters a URL must escape, and a colon, which Basic auth allows there. */
const CREDENTIALS: ProxyCredentials = { username: 'shot-user', password: 'p@ss:w/rd' };
const WRONG: ProxyCredentials = { username: 'shot-user', password: 'guess' };
/** How long a client listens to a hung proxy before deciding nothing is coming. */
const SILENCE_MS = 300;
/** A guard so that a broken close() fails its test instead of hanging the run. */
const GUARD = { timeout: 10_000 };
const NO_OPENSSL = opensslAvailable() ? false : 'openssl is not installed';
const HTTPS_BODY = 'hello over tls';

describe('startHttpProxy', () => {
  let site: FixtureSite;
  let cert: TestCertificate | undefined;
  let httpsTarget: HttpsTarget | undefined;

  before(async () => {
    site = await startTargetSite();
    if (NO_OPENSSL === false) {
      cert = makeTestCertificate();
      httpsTarget = await startHttpsTarget(cert);
    }
  });
  after(async () => {
    await httpsTarget?.close();
    await site.close();
  });

  it('names itself with its credentials, escaped, in its URL', async (t) => {
    const proxy = await startHttpProxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    assert.equal(proxy.url, `http://shot-user:p%40ss%3Aw%2Frd@127.0.0.1:${proxy.port}`);
    const url = new URL(proxy.url);
    assert.equal(decodeURIComponent(url.password), CREDENTIALS.password);
    const open = await startHttpProxy();
    t.after(() => open.close());
    assert.equal(open.url, `http://127.0.0.1:${open.port}`);
  });

  it('carries a plain request with the right credentials and records it', GUARD, async (t) => {
    const proxy = await startHttpProxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const url = `${site.origin}/headers`;
    const answer = await getThroughProxy(proxy, url, basic(CREDENTIALS));
    assert.equal(answer.status, 200);
    const seen = JSON.parse(answer.body) as Record<string, string>;
    assert.equal(seen.host, site.hostPort);
    assert.equal(seen['proxy-authorization'], undefined, 'the proxy keeps its credentials');
    assert.equal(site.hits.get('/headers'), 1);
    assertRecords(proxy, [{ kind: 'request', target: url, authorized: true }]);
  });

  it('answers 407 with a Basic challenge to wrong or missing credentials', GUARD, async (t) => {
    const proxy = await startHttpProxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const url = `${site.origin}/hello`;
    const hitsBefore = site.hits.get('/hello') ?? 0;
    const wrong = await getThroughProxy(proxy, url, basic(WRONG));
    assert.equal(wrong.status, 407);
    assert.equal(wrong.headers['proxy-authenticate'], 'Basic realm="test"');
    assert.equal((await getThroughProxy(proxy, url)).status, 407);
    const socket = await dial(proxy);
    const tunnel = await sendConnect(socket, site.hostPort, basic(WRONG));
    assert.equal(tunnel.status, 407);
    assert.match(tunnel.head, /\r\nProxy-Authenticate: Basic realm="test"\r\n/);
    assert.equal(site.hits.get('/hello') ?? 0, hitsBefore, 'nothing reached the target');
    assertRecords(proxy, [
      { kind: 'auth-failed', target: url, authorized: false },
      { kind: 'auth-failed', target: url, authorized: false },
      { kind: 'auth-failed', target: site.hostPort, authorized: false },
    ]);
  });

  it('tunnels TLS to an https target through CONNECT', {
    ...GUARD,
    skip: NO_OPENSSL,
  }, async (t) => {
    const { ca } = need(cert);
    const { port } = need(httpsTarget);
    const proxy = await startHttpProxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const socket = await dial(proxy);
    const target = `localhost:${port}`;
    assert.equal((await sendConnect(socket, target, basic(CREDENTIALS))).status, 200);
    const inner = tlsConnect({ socket, servername: 'localhost', ca });
    await once(inner, 'secureConnect');
    const answer = await rawGet(inner, 'localhost', '/');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.ok(answer.includes(HTTPS_BODY), answer);
    assertRecords(proxy, [{ kind: 'connect', target, authorized: true }]);
  });

  it('listens with TLS as an https:// proxy', { ...GUARD, skip: NO_OPENSSL }, async (t) => {
    const tls = need(cert);
    const { port } = need(httpsTarget);
    const proxy = await startHttpProxy({ auth: CREDENTIALS, tls });
    t.after(() => proxy.close());
    assert.match(proxy.url, /^https:\/\/shot-user:/);
    const outer = tlsConnect({ host: proxy.host, port: proxy.port, ca: tls.ca });
    await once(outer, 'secureConnect');
    const target = `localhost:${port}`;
    assert.equal((await sendConnect(outer, target, basic(CREDENTIALS))).status, 200);
    const inner = tlsConnect({ socket: outer, servername: 'localhost', ca: tls.ca });
    await once(inner, 'secureConnect');
    const answer = await rawGet(inner, 'localhost', '/');
    assert.ok(answer.includes(HTTPS_BODY), answer);
    assertRecords(proxy, [{ kind: 'connect', target, authorized: true }]);
  });

  it('goes onward only to loopback, `localhost` and its `hosts` names', GUARD, async (t) => {
    await assert.rejects(startHttpProxy({ hosts: { far: '10.0.0.1' } }), /not a loopback/);
    const proxy = await startHttpProxy({ hosts: { 'Shots.Test': '127.0.0.1' } });
    t.after(() => proxy.close());
    const named = `http://shots.test:${site.port}/hello`;
    assert.equal((await getThroughProxy(proxy, named)).status, 200);
    const local = `http://localhost:${site.port}/hello`;
    assert.equal((await getThroughProxy(proxy, local)).status, 200);
    // TEST-NET-1 and a real name: refused by the proxy before any connection is tried.
    assert.equal((await getThroughProxy(proxy, 'http://192.0.2.1/hello')).status, 502);
    const socket = await dial(proxy);
    assert.equal((await sendConnect(socket, 'example.com:443')).status, 502);
    assertRecords(proxy, [
      { kind: 'request', target: named, authorized: true },
      { kind: 'request', target: local, authorized: true },
      { kind: 'request', target: 'http://192.0.2.1/hello', authorized: true },
      { kind: 'connect', target: 'example.com:443', authorized: true },
    ]);
  });

  it("answers 403 to everything in 'refuse' mode", GUARD, async (t) => {
    const proxy = await startHttpProxy({ auth: CREDENTIALS, mode: 'refuse' });
    t.after(() => proxy.close());
    const hitsBefore = site.hits.get('/hello') ?? 0;
    const url = `${site.origin}/hello`;
    assert.equal((await getThroughProxy(proxy, url, basic(CREDENTIALS))).status, 403);
    const socket = await dial(proxy);
    assert.equal((await sendConnect(socket, site.hostPort, basic(CREDENTIALS))).status, 403);
    assert.equal(site.hits.get('/hello') ?? 0, hitsBefore);
    assertRecords(proxy, [
      { kind: 'request', target: url, authorized: true },
      { kind: 'connect', target: site.hostPort, authorized: true },
    ]);
  });

  it("says nothing in 'hang' mode, and close() still ends the connection", GUARD, async () => {
    const proxy = await startHttpProxy({ mode: 'hang' });
    const socket = await dial(proxy);
    const received = collect(socket);
    socket.write(`CONNECT ${site.hostPort} HTTP/1.1\r\nHost: ${site.hostPort}\r\n\r\n`);
    await sleep(SILENCE_MS);
    assert.equal(Buffer.concat(received).length, 0, 'a hung proxy answers nothing');
    assert.equal(proxy.connections, 1, 'the client did reach the proxy');
    assert.deepEqual(proxy.records, []);
    await proxy.close();
    await closed(socket);
  });

  it('close() ends open tunnels and idle keep-alive connections', GUARD, async () => {
    const proxy = await startHttpProxy();
    const tunnel = await dial(proxy);
    assert.equal((await sendConnect(tunnel, site.hostPort)).status, 200);
    tunnel.resume();
    const idle = await dial(proxy);
    idle.write(`GET ${site.origin}/hello HTTP/1.1\r\nHost: ${site.hostPort}\r\n\r\n`);
    const received = collect(idle);
    await untilSome(received);
    await proxy.close();
    await Promise.all([closed(tunnel), closed(idle)]);
    // Closing again is harmless and immediate.
    await proxy.close();
  });
});

describe('startSocks5Proxy', () => {
  let site: FixtureSite;

  before(async () => {
    site = await startTargetSite();
  });
  after(() => site.close());

  it('names itself socks5:// with its credentials, escaped', async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    assert.equal(proxy.url, `socks5://shot-user:p%40ss%3Aw%2Frd@127.0.0.1:${proxy.port}`);
  });

  it('carries a request to `localhost` by name after username/password', GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const outcome = await socksConnect(proxy, {
      credentials: CREDENTIALS,
      address: domainAddress('localhost'),
      port: site.port,
    });
    assert.equal(outcome.method, 0x02);
    assert.equal(outcome.authStatus, 0x00);
    assert.equal(outcome.reply, 0x00);
    assert.equal(outcome.bound?.addressType, 0x01, 'bound to an IPv4 loopback address');
    assert.equal(outcome.bound?.address.readUInt8(0), 127);
    assert.notEqual(outcome.bound?.port, 0);
    const answer = await rawGet(outcome.socket, 'localhost', '/hello');
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.ok(answer.includes('hello through the proxy'), answer);
    assertRecords(proxy, [
      {
        kind: 'socks-connect',
        target: `localhost:${site.port}`,
        addressType: 'domain',
        authorized: true,
      },
    ]);
  });

  it('carries a request to an IPv4 address', GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const outcome = await socksConnect(proxy, {
      credentials: CREDENTIALS,
      address: ipv4Address('127.0.0.1'),
      port: site.port,
    });
    assert.equal(outcome.reply, 0x00);
    assert.match(await rawGet(outcome.socket, site.hostPort, '/hello'), /^HTTP\/1\.1 200 /);
    assertRecords(proxy, [
      { kind: 'socks-connect', target: site.hostPort, addressType: 'ipv4', authorized: true },
    ]);
  });

  it('answers a wrong password with status 0x01 and closes', GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const outcome = await socksConnect(proxy, {
      credentials: WRONG,
      address: ipv4Address('127.0.0.1'),
      port: site.port,
    });
    assert.equal(outcome.authStatus, 0x01);
    assert.equal(outcome.reply, undefined);
    outcome.socket.resume();
    await closed(outcome.socket);
    assertRecords(proxy, [{ kind: 'auth-failed', target: '', authorized: false }]);
  });

  it('offers no method to a client without username/password', GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS });
    t.after(() => proxy.close());
    const outcome = await socksConnect(proxy, {
      methods: [0x00],
      address: ipv4Address('127.0.0.1'),
      port: site.port,
    });
    assert.equal(outcome.method, 0xff);
    assertRecords(proxy, [{ kind: 'auth-failed', target: '', authorized: false }]);
  });

  it('asks for no authentication when it has no credentials', GUARD, async (t) => {
    const proxy = await startSocks5Proxy();
    t.after(() => proxy.close());
    assert.equal(proxy.url, `socks5://127.0.0.1:${proxy.port}`);
    const outcome = await socksConnect(proxy, {
      address: domainAddress('localhost'),
      port: site.port,
    });
    assert.equal(outcome.method, 0x00);
    assert.equal(outcome.reply, 0x00);
    assert.match(await rawGet(outcome.socket, 'localhost', '/hello'), /^HTTP\/1\.1 200 /);
  });

  it('goes onward only to loopback, `localhost` and its `hosts` names', GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ hosts: { 'shots.test': '127.0.0.1' } });
    t.after(() => proxy.close());
    const reply = async (address: Buffer) =>
      (await socksConnect(proxy, { address, port: site.port })).reply;
    assert.equal(await reply(domainAddress('shots.test')), 0x00);
    assert.equal(await reply(ipv4Address('192.0.2.1')), 0x02);
    assert.equal(await reply(domainAddress('example.com')), 0x02);
    // 2001:db8::1, the documentation prefix.
    assert.equal(await reply(ipv6Address([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1])), 0x08);
    assertRecords(proxy, [
      { kind: 'socks-connect', target: `shots.test:${site.port}`, addressType: 'domain' },
      { kind: 'socks-connect', target: `192.0.2.1:${site.port}`, addressType: 'ipv4' },
      { kind: 'socks-connect', target: `example.com:${site.port}`, addressType: 'domain' },
      { kind: 'socks-connect', target: `[2001:db8::1]:${site.port}`, addressType: 'ipv6' },
    ]);
  });

  it("answers 0x02 (not allowed by ruleset) in 'refuse' mode", GUARD, async (t) => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS, mode: 'refuse' });
    t.after(() => proxy.close());
    const hitsBefore = site.hits.get('/hello') ?? 0;
    const outcome = await socksConnect(proxy, {
      credentials: CREDENTIALS,
      address: domainAddress('localhost'),
      port: site.port,
    });
    assert.equal(outcome.authStatus, 0x00);
    assert.equal(outcome.reply, 0x02);
    assert.equal(site.hits.get('/hello') ?? 0, hitsBefore);
    assertRecords(proxy, [
      { kind: 'socks-connect', target: `localhost:${site.port}`, addressType: 'domain' },
    ]);
  });

  it("says nothing in 'hang' mode, and close() still ends the connection", GUARD, async () => {
    const proxy = await startSocks5Proxy({ auth: CREDENTIALS, mode: 'hang' });
    const socket = await dial(proxy);
    const received = collect(socket);
    socket.write(Buffer.from([0x05, 0x01, 0x02]));
    await sleep(SILENCE_MS);
    assert.equal(Buffer.concat(received).length, 0, 'a hung proxy answers nothing');
    assert.equal(proxy.connections, 1, 'the client did reach the proxy');
    await proxy.close();
    await closed(socket);
  });

  it('close() ends an open tunnel', GUARD, async () => {
    const proxy = await startSocks5Proxy();
    const outcome = await socksConnect(proxy, {
      address: ipv4Address('127.0.0.1'),
      port: site.port,
    });
    assert.equal(outcome.reply, 0x00);
    outcome.socket.resume();
    await proxy.close();
    await closed(outcome.socket);
  });
});

/** The plain target: a page, and an echo of the headers that arrived. */
function startTargetSite(): Promise<FixtureSite> {
  return startSite({
    '/hello': 'hello through the proxy',
    '/headers': (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers));
    },
  });
}

interface HttpsTarget {
  port: number;
  close(): Promise<void>;
}

async function startHttpsTarget(cert: TestCertificate): Promise<HttpsTarget> {
  const server = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(HTTPS_BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** For values a `before` sets only when openssl exists; the tests using them skip otherwise. */
function need<T>(value: T | undefined): T {
  assert.ok(value !== undefined, 'set up in before()');
  return value;
}

function basic({ username, password }: ProxyCredentials): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

/** Compares everything but `at`, which only has to be a time from this run. */
function assertRecords(proxy: TestProxy, expected: Array<Partial<ProxyRecord>>): void {
  for (const { at } of proxy.records) assert.ok(at > 0 && at <= Date.now(), `at ${at}`);
  const fields = expected.map((entry) => Object.keys(entry) as Array<keyof ProxyRecord>);
  const actual = proxy.records.map((entry, i) =>
    Object.fromEntries((fields[i] ?? []).map((field) => [field, entry[field]])),
  );
  assert.deepEqual(actual, expected);
}

async function dial(proxy: TestProxy): Promise<Socket> {
  const socket = connect({ host: proxy.host, port: proxy.port });
  await once(socket, 'connect');
  return socket;
}

/** Everything a socket receives from now on, without ending or consuming it otherwise. */
function collect(socket: Socket): Buffer[] {
  const received: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => received.push(chunk));
  return received;
}

async function untilSome(received: Buffer[]): Promise<void> {
  while (received.length === 0) await sleep(10);
}

/** Resolves once the socket has closed, including when it already has. */
async function closed(socket: Duplex): Promise<void> {
  if (!socket.closed) await once(socket, 'close');
}

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A plain request in absolute form through an HTTP proxy, as a browser sends one. */
function getThroughProxy(proxy: TestProxy, url: string, authorization?: string): Promise<Answer> {
  const headers = {
    host: new URL(url).host,
    ...(authorization === undefined ? {} : { 'proxy-authorization': authorization }),
  };
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: proxy.host, port: proxy.port, path: url, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/**
 * Sends CONNECT and reads the answer's head a byte at a time, so that not one byte of the
 * tunnel behind it is taken from the socket.
 */
async function sendConnect(
  socket: Duplex,
  target: string,
  authorization?: string,
): Promise<{ status: number; head: string }> {
  const credentials =
    authorization === undefined ? '' : `Proxy-Authorization: ${authorization}\r\n`;
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${credentials}\r\n`);
  let head = '';
  while (!head.endsWith('\r\n\r\n')) head += (await readBytes(socket, 1)).toString('latin1');
  return { status: Number(head.split(' ')[1]), head };
}

/**
 * One GET that asks the server to close after answering; the whole answer as sent, head and
 * body (chunked framing included).
 */
async function rawGet(stream: Duplex, host: string, path: string): Promise<string> {
  stream.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

function ipv4Address(address: string): Buffer {
  return Buffer.from([0x01, ...address.split('.').map(Number)]);
}

function domainAddress(name: string): Buffer {
  const bytes = Buffer.from(name, 'utf8');
  return Buffer.concat([Buffer.from([0x03, bytes.length]), bytes]);
}

function ipv6Address(groups: number[]): Buffer {
  const bytes = Buffer.alloc(17);
  bytes[0] = 0x04;
  groups.forEach((group, i) => {
    bytes.writeUInt16BE(group, 1 + i * 2);
  });
  return bytes;
}

interface SocksOutcome {
  socket: Socket;
  /** The method the server chose; 0xff for none acceptable. */
  method: number;
  /** RFC 1929 status, when username/password was negotiated. */
  authStatus?: number;
  /** The CONNECT reply code, when the handshake got that far. */
  reply?: number;
  bound?: { addressType: number; address: Buffer; port: number };
}

/**
 * A SOCKS5 client's handshake up to the CONNECT reply, stopping at the first refusal; the
 * socket is left open, and after a success it is the tunnel. `address` is ATYP and address.
 */
async function socksConnect(
  proxy: TestProxy,
  input: { methods?: number[]; credentials?: ProxyCredentials; address: Buffer; port: number },
): Promise<SocksOutcome> {
  const socket = await dial(proxy);
  const methods = input.methods ?? [input.credentials ? 0x02 : 0x00];
  socket.write(Buffer.from([0x05, methods.length, ...methods]));
  const outcome: SocksOutcome = { socket, method: (await readBytes(socket, 2)).readUInt8(1) };
  if (outcome.method === 0xff) return outcome;
  if (outcome.method === 0x02) {
    const username = Buffer.from(input.credentials?.username ?? '', 'utf8');
    const password = Buffer.from(input.credentials?.password ?? '', 'utf8');
    socket.write(
      Buffer.concat([
        Buffer.from([0x01, username.length]),
        username,
        Buffer.from([password.length]),
        password,
      ]),
    );
    outcome.authStatus = (await readBytes(socket, 2)).readUInt8(1);
    if (outcome.authStatus !== 0x00) return outcome;
  }
  const port = Buffer.alloc(2);
  port.writeUInt16BE(input.port);
  socket.write(Buffer.concat([Buffer.from([0x05, 0x01, 0x00]), input.address, port]));
  const head = await readBytes(socket, 4);
  outcome.reply = head.readUInt8(1);
  const addressType = head.readUInt8(3);
  const length =
    addressType === 0x01
      ? 4
      : addressType === 0x04
        ? 16
        : (await readBytes(socket, 1)).readUInt8(0);
  const address = await readBytes(socket, length);
  outcome.bound = { addressType, address, port: (await readBytes(socket, 2)).readUInt16BE(0) };
  return outcome;
}
