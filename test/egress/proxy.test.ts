/**
 * The egress proxy, end to end over loopback only. A fixture HTTP server on 127.0.0.1:P is
 * allowlisted; a "canary" on 127.0.0.2:P (same port, different loopback address) is not, and
 * counts every TCP connection it receives: it must stay at zero.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, Server } from 'node:http';
import { createServer, request } from 'node:http';
import type { Server as NetServer, Socket } from 'node:net';
import { connect, createServer as createNetServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { EgressPolicy } from '../../src/adapters/egress/policy.ts';
import { addressSet, parseAllowlist } from '../../src/adapters/egress/policy.ts';
import type { EgressProxy, EgressRefusal } from '../../src/adapters/egress/proxy.ts';
import { startEgressProxy } from '../../src/adapters/egress/proxy.ts';
import { silentLogger } from '../../src/lib/logger.ts';

const BIG = 4 * 1024 * 1024;
/** Injected as one of the machine's own interface addresses. Never connected to. */
const OWN_ADDRESS = '1.2.3.7';

interface Fixture {
  server: Server;
  port: number;
  sockets: Set<Socket>;
  connections: number;
  seen: Array<{ method: string; url: string; headers: IncomingMessage['headers'] }>;
}

async function listen(server: NetServer, host: string, port = 0): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
}

async function startFixture(): Promise<Fixture> {
  const fixture: Fixture = {
    server: createServer(),
    port: 0,
    sockets: new Set(),
    connections: 0,
    seen: [],
  };
  const { server } = fixture;
  server.on('connection', (socket: Socket) => {
    fixture.connections++;
    fixture.sockets.add(socket);
    socket.once('close', () => fixture.sockets.delete(socket));
  });
  server.on('request', (req, res) => {
    fixture.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG });
        res.end(Buffer.alloc(BIG, 0x61));
        return;
      }
      const body = JSON.stringify({
        who: 'fixture',
        method: req.method,
        url: req.url,
        host: req.headers.host,
        body: Buffer.concat(chunks).toString(),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
      res.end(body);
    });
  });
  server.on('upgrade', (req, socket: Socket) => {
    fixture.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n',
    );
    socket.on('data', (d: Buffer) => socket.write(`echo:${d.toString()}`));
    socket.on('end', () => socket.end());
    socket.on('error', () => {});
  });
  await listen(server, '127.0.0.1');
  const address = server.address();
  assert.ok(address && typeof address === 'object');
  fixture.port = address.port;
  return fixture;
}

async function stopFixture(fixture: Fixture): Promise<void> {
  const closed = new Promise<void>((resolve) => fixture.server.close(() => resolve()));
  for (const socket of fixture.sockets) socket.destroy();
  await closed;
}

interface Response {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A plain proxied request: absolute-form target sent to the proxy. */
function viaProxy(
  proxy: EgressProxy,
  target: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: proxy.port,
      method: options.method ?? 'GET',
      path: target,
      headers: options.headers,
      agent: false,
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      res.on('error', reject);
    });
    req.end(options.body);
  });
}

/** CONNECT through the proxy. Resolves with the status and, on 200, the tunnel socket. */
function connectVia(
  proxy: EgressProxy,
  authority: string,
): Promise<{ status: number; socket: Socket; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: proxy.port,
      method: 'CONNECT',
      path: authority,
      agent: false,
    });
    req.on('error', reject);
    req.on('connect', (res, socket: Socket) => {
      socket.on('error', () => {});
      resolve({ status: res.statusCode ?? 0, socket, headers: res.headers });
    });
    req.end();
  });
}

/** Sends an HTTP/1.1 request through a tunnel and reads until the server closes. */
function httpOverTunnel(socket: Socket, path: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('error', reject);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

/** Writes raw bytes to the proxy and collects what comes back until it closes. */
function rawExchange(proxy: EgressProxy, data: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(proxy.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return;
      reject(err);
    });
    socket.setTimeout(5000, () => socket.destroy());
    socket.end(data);
  });
}

function once<T>(emitter: { once(event: string, cb: (v: T) => void): unknown }, event: string) {
  return new Promise<T>((resolve) => emitter.once(event, resolve));
}

describe('egress proxy', () => {
  let fixture: Fixture;
  let canary: ReturnType<typeof createNetServer>;
  let canaryConnections = 0;
  let selfServer: Server;
  let selfPort: number;
  let deadPort: number;
  let proxy: EgressProxy;
  const refusals: EgressRefusal[] = [];
  const warnings: object[] = [];
  const resolverCalls: string[] = [];
  /** Answers per name; a function answer is called with the call count for that name. */
  const dns: Record<string, string[] | ((n: number) => string[])> = {};

  before(async () => {
    fixture = await startFixture();
    canary = createNetServer((socket) => {
      canaryConnections++;
      socket.on('error', () => {});
      socket.destroy();
    });
    await listen(canary, '127.0.0.2', fixture.port);

    selfServer = createServer((_req, res) => res.end('self'));
    await listen(selfServer, '127.0.0.1');
    selfPort = (selfServer.address() as { port: number }).port;

    const dead = createNetServer();
    await listen(dead, '127.0.0.1');
    deadPort = (dead.address() as { port: number }).port;
    await new Promise<void>((resolve) => dead.close(() => resolve()));

    const counts: Record<string, number> = {};
    const policy: EgressPolicy = {
      allowlist: parseAllowlist(
        `127.0.0.1:${fixture.port},127.0.0.1:${selfPort},127.0.0.1:${deadPort},localhost:${fixture.port}`,
      ),
      selfPorts: [selfPort],
      localAddresses: () => addressSet(['127.0.0.1', '::1', OWN_ADDRESS]),
      resolve: async (name) => {
        resolverCalls.push(name);
        counts[name] = (counts[name] ?? 0) + 1;
        const answer = dns[name];
        if (answer === undefined) {
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
        }
        return typeof answer === 'function' ? answer(counts[name] ?? 1) : answer;
      },
    };
    dns['app.test'] = ['127.0.0.1'];
    dns['canary.test'] = ['127.0.0.2'];
    dns['split.test'] = ['127.0.0.1', '127.0.0.2'];
    dns['intranet.test'] = ['10.1.2.3'];
    dns['own.test'] = [OWN_ADDRESS];
    proxy = await startEgressProxy({
      policy,
      logger: { ...silentLogger, warn: (obj) => warnings.push(obj) },
      onRefused: (info) => refusals.push(info),
      connectTimeoutMs: 2000,
      idleTimeoutMs: 10_000,
    });
  });

  after(async () => {
    await proxy.close();
    await stopFixture(fixture);
    await new Promise<void>((resolve) => canary.close(() => resolve()));
    selfServer.closeAllConnections();
    await new Promise<void>((resolve) => selfServer.close(() => resolve()));
    assert.equal(canaryConnections, 0, 'the canary must never have been reached');
  });

  test('listens on loopback only and reports its url', async () => {
    assert.equal(proxy.url, `http://127.0.0.1:${proxy.port}`);
    await assert.rejects(
      startEgressProxy({
        policy: { allowlist: new Set(), selfPorts: [] },
        logger: silentLogger,
        host: '0.0.0.0',
      }),
    );
    await assert.rejects(
      startEgressProxy({
        policy: { allowlist: new Set(), selfPorts: [] },
        logger: silentLogger,
        host: '192.0.2.2',
      }),
    );
    const v6 = await startEgressProxy({
      policy: { allowlist: new Set(), selfPorts: [] },
      logger: silentLogger,
      host: '::1',
    });
    assert.equal(v6.url, `http://[::1]:${v6.port}`);
    await v6.close();
  });

  test('plain http GET to an allowlisted target is relayed', async () => {
    const res = await viaProxy(proxy, `http://127.0.0.1:${fixture.port}/hello?x=1`, {
      headers: {
        'proxy-authorization': 'Basic c2VjcmV0',
        'proxy-connection': 'keep-alive',
        'x-custom': 'kept',
      },
    });
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body);
    assert.equal(body.who, 'fixture');
    assert.equal(body.url, '/hello?x=1');
    assert.equal(body.host, `127.0.0.1:${fixture.port}`);
    assert.deepEqual(res.headers['set-cookie'], ['a=1', 'b=2']);
    const seen = fixture.seen.at(-1);
    assert.equal(seen?.headers['proxy-authorization'], undefined);
    assert.equal(seen?.headers['proxy-connection'], undefined);
    assert.equal(seen?.headers['x-custom'], 'kept');
  });

  test('POST bodies are relayed and the Host header keeps the name', async () => {
    const res = await viaProxy(proxy, `http://app.test:${fixture.port}/submit`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'payload',
    });
    assert.equal(res.status, 200);
    const body = JSON.parse(res.body);
    assert.equal(body.method, 'POST');
    assert.equal(body.body, 'payload');
    assert.equal(body.host, `app.test:${fixture.port}`);
  });

  test('localhost is answered as loopback without DNS and allowlisted by name', async () => {
    const before = resolverCalls.length;
    const res = await viaProxy(proxy, `http://localhost:${fixture.port}/lh`);
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).host, `localhost:${fixture.port}`);
    assert.equal(resolverCalls.length, before);
  });

  test('a CONNECT tunnel to an allowlisted target works', async () => {
    const { status, socket } = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    assert.equal(status, 200);
    const text = await httpOverTunnel(socket, '/through-tunnel', 'tunnel.example');
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.match(text, /"url":"\/through-tunnel"/);
    assert.match(text, /"host":"tunnel.example"/);
  });

  test('a WebSocket-style upgrade over plain http is relayed', async () => {
    const req = request({
      host: '127.0.0.1',
      port: proxy.port,
      path: `http://app.test:${fixture.port}/socket`,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13' },
      agent: false,
    });
    req.end();
    const [res, socket] = await new Promise<[IncomingMessage, Socket]>((resolve, reject) => {
      req.on('upgrade', (r, s: Socket) => resolve([r, s]));
      req.on('response', (r) => reject(new Error(`unexpected ${r.statusCode}`)));
      req.on('error', reject);
    });
    assert.equal(res.statusCode, 101);
    socket.write('ping');
    const reply = await once<Buffer>(socket, 'data');
    assert.equal(reply.toString(), 'echo:ping');
    const seen = fixture.seen.at(-1);
    assert.equal(seen?.url, '/socket');
    assert.equal(seen?.headers.upgrade, 'websocket');
    assert.equal(seen?.headers.host, `app.test:${fixture.port}`);
    socket.destroy();
  });

  test('the canary (not allowlisted) is refused: CONNECT 403, GET 403 with header', async () => {
    const before = proxy.stats().refused;
    const c = await connectVia(proxy, `127.0.0.2:${fixture.port}`);
    assert.equal(c.status, 403);
    assert.match(String(c.headers['x-egress-refused']), /loopback/);
    c.socket.destroy();

    const res = await viaProxy(proxy, `http://127.0.0.2:${fixture.port}/steal`);
    assert.equal(res.status, 403);
    assert.match(String(res.headers['x-egress-refused']), /127\.0\.0\.2 is a loopback address$/);
    assert.match(res.body, /^egress refused: /);

    const up = await viaProxy(proxy, `http://127.0.0.2:${fixture.port}/ws`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket' },
    });
    assert.equal(up.status, 403);
    assert.ok(up.headers['x-egress-refused']);

    for (const encoded of [
      '0x7f.0.0.2',
      '2130706434',
      '0177.0.0.2',
      '127.2',
      '[::ffff:127.0.0.2]',
    ]) {
      const r = await viaProxy(proxy, `http://${encoded}:${fixture.port}/`);
      assert.equal(r.status, 403, encoded);
      const t = await connectVia(proxy, `${encoded}:${fixture.port}`);
      assert.equal(t.status, 403, encoded);
      t.socket.destroy();
    }
    const v6 = await connectVia(proxy, `[::1]:${fixture.port}`);
    assert.equal(v6.status, 403);
    v6.socket.destroy();

    assert.ok(proxy.stats().refused >= before + 13);
    assert.equal(canaryConnections, 0);
    const last = refusals.at(-1);
    assert.equal(last?.port, fixture.port);
    assert.ok(warnings.length > 0);
  });

  test('a name the resolver maps to the canary is refused', async () => {
    const res = await viaProxy(proxy, `http://canary.test:${fixture.port}/`);
    assert.equal(res.status, 403);
    assert.match(String(res.headers['x-egress-refused']), /canary\.test resolves to a loopback/);
    const c = await connectVia(proxy, `canary.test:${fixture.port}`);
    assert.equal(c.status, 403);
    c.socket.destroy();
    // One allowlisted and one refused address: refused as a whole.
    const split = await viaProxy(proxy, `http://split.test:${fixture.port}/`);
    assert.equal(split.status, 403);
    assert.equal(canaryConnections, 0);
  });

  test('refusal pages and headers name the host and the reason class, never an address', async () => {
    const res = await viaProxy(proxy, `http://intranet.test:${fixture.port}/`);
    assert.equal(res.status, 403);
    assert.equal(
      res.body,
      'egress refused: url host intranet.test resolves to a private address\n',
    );
    assert.equal(
      res.headers['x-egress-refused'],
      'url host intranet.test resolves to a private address',
    );
    const tunnel = await rawExchange(
      proxy,
      'CONNECT intranet.test:443 HTTP/1.1\r\nHost: intranet.test:443\r\n\r\n',
    );
    assert.match(tunnel, /^HTTP\/1\.1 403 /);
    assert.match(tunnel, /intranet\.test resolves to a private address/);
    const upgrade = await viaProxy(proxy, `http://intranet.test:${fixture.port}/ws`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket' },
    });
    assert.equal(upgrade.status, 403);
    for (const text of [
      res.body,
      JSON.stringify(res.headers),
      tunnel,
      upgrade.body,
      JSON.stringify(upgrade.headers),
    ]) {
      assert.doesNotMatch(text, /10\.1\.2\.3/);
    }
  });

  test("the host's own address is refused before any connection, on every port", async () => {
    const before = proxy.stats();
    for (const port of [80, 443, fixture.port]) {
      const named = await viaProxy(proxy, `http://own.test:${port}/`);
      assert.equal(named.status, 403);
      assert.equal(
        named.headers['x-egress-refused'],
        'url host own.test resolves to a non-public address',
      );
      const literal = await connectVia(proxy, `${OWN_ADDRESS}:${port}`);
      assert.equal(literal.status, 403);
      literal.socket.destroy();
      const tunnel = await connectVia(proxy, `own.test:${port}`);
      assert.equal(tunnel.status, 403);
      tunnel.socket.destroy();
    }
    const after = proxy.stats();
    assert.equal(after.refused, before.refused + 9);
    assert.equal(after.allowed, before.allowed, 'nothing was let through to connect');
  });

  test('the resolver is called once per request; a rebinding answer cannot redirect it', async () => {
    // First answer: the allowlisted fixture. Any later answer: the canary.
    dns['rebind.test'] = (n) => (n === 1 ? ['127.0.0.1'] : ['127.0.0.2']);
    const calls = () => resolverCalls.filter((n) => n === 'rebind.test').length;
    const res = await viaProxy(proxy, `http://rebind.test:${fixture.port}/rebind`);
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).who, 'fixture');
    assert.equal(calls(), 1);
    assert.equal(canaryConnections, 0);

    dns['rebind2.test'] = (n) => (n === 1 ? ['127.0.0.1'] : ['127.0.0.2']);
    const { status, socket } = await connectVia(proxy, `rebind2.test:${fixture.port}`);
    assert.equal(status, 200);
    const text = await httpOverTunnel(socket, '/rebind2', 'rebind2.test');
    assert.match(text, /"who":"fixture"/);
    assert.equal(resolverCalls.filter((n) => n === 'rebind2.test').length, 1);
    assert.equal(canaryConnections, 0);
  });

  test("the service's own port is refused even when allowlisted, and so is the proxy's", async () => {
    const res = await viaProxy(proxy, `http://127.0.0.1:${selfPort}/`);
    assert.equal(res.status, 403);
    // The text of any loopback refusal: a page scanning ports cannot tell this service's.
    assert.equal(res.headers['x-egress-refused'], 'url host 127.0.0.1 is a loopback address');
    const c = await connectVia(proxy, `localhost:${selfPort}`);
    assert.equal(c.status, 403);
    c.socket.destroy();
    const loop = await connectVia(proxy, `127.0.0.1:${proxy.port}`);
    assert.equal(loop.status, 403);
    loop.socket.destroy();
    const loop2 = await viaProxy(proxy, `http://127.0.0.1:${proxy.port}/`);
    assert.equal(loop2.status, 403);
  });

  test('unresolvable names and refused upstream connections give 502', async () => {
    const res = await viaProxy(proxy, `http://nowhere.test:${fixture.port}/`);
    assert.equal(res.status, 502);
    assert.equal(res.headers['x-egress-refused'], undefined);
    const c = await connectVia(proxy, `nowhere.test:${fixture.port}`);
    assert.equal(c.status, 502);
    c.socket.destroy();

    const dead = await viaProxy(proxy, `http://127.0.0.1:${deadPort}/`);
    assert.equal(dead.status, 502);
    const deadTunnel = await connectVia(proxy, `127.0.0.1:${deadPort}`);
    assert.equal(deadTunnel.status, 502);
    deadTunnel.socket.destroy();
  });

  test('non-proxy and garbage requests get 400 without hurting the proxy', async () => {
    assert.match(
      await rawExchange(proxy, 'GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
    assert.match(await rawExchange(proxy, 'GARBAGE\r\n\r\n'), /^HTTP\/1\.1 400 /);
    assert.match(await rawExchange(proxy, 'CONNECT nonsense HTTP/1.1\r\n\r\n'), /^HTTP\/1\.1 400 /);
    assert.match(
      await rawExchange(proxy, 'CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
    assert.match(
      await rawExchange(proxy, 'GET https://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
    assert.match(
      await rawExchange(proxy, 'GET file:///etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n'),
      /^HTTP\/1\.1 400 /,
    );
    assert.match(
      await rawExchange(
        proxy,
        `GET http://127.0.0.1:${fixture.port}/ HTTP/1.1\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`,
      ),
      /^HTTP\/1\.1 431 /,
    );
    await rawExchange(proxy, Buffer.from([0, 1, 2, 255, 254, 13, 10, 13, 10]));
    assert.match(
      await rawExchange(proxy, 'GET http://127.0.0.1:1/ HTTP/1.1\r\nHost: x\r\nHost'),
      /^HTTP\/1\.1 400 /,
    );
    // Still serving.
    const res = await viaProxy(proxy, `http://127.0.0.1:${fixture.port}/still-alive`);
    assert.equal(res.status, 200);
  });

  test('a client that hangs up mid-tunnel does not crash anything', async () => {
    const { status, socket } = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    assert.equal(status, 200);
    socket.write('GET /half');
    socket.destroy();
    const res = await viaProxy(proxy, `http://127.0.0.1:${fixture.port}/after-hangup`);
    assert.equal(res.status, 200);
  });

  test('large responses arrive whole, plain and tunnelled', async () => {
    const res = await viaProxy(proxy, `http://127.0.0.1:${fixture.port}/big`);
    assert.equal(res.status, 200);
    assert.equal(res.body.length, BIG);
    const { socket } = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    const text = await httpOverTunnel(socket, '/big', 'x');
    assert.equal(text.length - text.indexOf('\r\n\r\n') - 4, BIG);
  });

  test('stats count allowed and refused destinations', () => {
    const s = proxy.stats();
    assert.ok(s.allowed >= 8, JSON.stringify(s));
    assert.ok(s.refused >= 15, JSON.stringify(s));
    assert.equal(typeof s.open, 'number');
  });
});

describe('egress proxy close()', () => {
  test('ends open tunnels and stops listening', async () => {
    const fixture = await startFixture();
    const proxy = await startEgressProxy({
      policy: { allowlist: parseAllowlist(`127.0.0.1:${fixture.port}`), selfPorts: [] },
      logger: silentLogger,
    });
    const a = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    const b = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    assert.equal(a.status, 200);
    assert.equal(b.status, 200);
    assert.equal(proxy.stats().open, 2);
    const closedA = once(a.socket, 'close');
    const closedB = once(b.socket, 'close');
    await proxy.close();
    await Promise.all([closedA, closedB]);
    assert.equal(proxy.stats().open, 0);
    await proxy.close(); // idempotent
    await assert.rejects(
      new Promise((resolve, reject) => {
        const s = connect(proxy.port, '127.0.0.1');
        s.on('connect', () => {
          s.destroy();
          resolve(undefined);
        });
        s.on('error', reject);
      }),
    );
    await stopFixture(fixture);
  });

  test('idle tunnels are closed after idleTimeoutMs', async () => {
    const fixture = await startFixture();
    const proxy = await startEgressProxy({
      policy: { allowlist: parseAllowlist(`127.0.0.1:${fixture.port}`), selfPorts: [] },
      logger: silentLogger,
      idleTimeoutMs: 300,
    });
    const t = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    assert.equal(t.status, 200);
    const started = Date.now();
    await once(t.socket, 'close');
    assert.ok(Date.now() - started < 5000);
    await proxy.close();
    await stopFixture(fixture);
  });

  test('a request head that never completes is cut off (slow loris)', async () => {
    const proxy = await startEgressProxy({
      policy: { allowlist: new Set(), selfPorts: [] },
      logger: silentLogger,
      idleTimeoutMs: 300,
    });
    const socket = connect(proxy.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET http://example.com/ HTTP/1.1\r\n');
    const drip = setInterval(() => socket.writable && socket.write('X-A: b\r\n'), 50);
    const started = Date.now();
    await once(socket, 'close');
    clearInterval(drip);
    assert.ok(Date.now() - started < 3000);
    await proxy.close();
  });

  test('a throwing onRefused hook does not break the proxy', async () => {
    const proxy = await startEgressProxy({
      policy: { allowlist: new Set(), selfPorts: [] },
      logger: silentLogger,
      onRefused: () => {
        throw new Error('hook failure');
      },
    });
    const res = await viaProxy(proxy, 'http://10.0.0.1/');
    assert.equal(res.status, 403);
    assert.match(String(res.headers['x-egress-refused']), /10\.0\.0\.1 is a private address$/);
    assert.deepEqual(proxy.stats(), { allowed: 0, refused: 1, open: 0 });
    await proxy.close();
  });

  test('maxConnections bounds concurrent upstream connections', async () => {
    const fixture = await startFixture();
    const proxy = await startEgressProxy({
      policy: { allowlist: parseAllowlist(`127.0.0.1:${fixture.port}`), selfPorts: [] },
      logger: silentLogger,
      maxConnections: 1,
    });
    const first = await connectVia(proxy, `127.0.0.1:${fixture.port}`);
    assert.equal(first.status, 200);
    // The second client connection is over the limit: dropped or answered 503, never tunnelled.
    const second = await connectVia(proxy, `127.0.0.1:${fixture.port}`).catch(() => ({
      status: 0,
      socket: undefined,
    }));
    assert.notEqual(second.status, 200);
    second.socket?.destroy();
    await proxy.close();
    await stopFixture(fixture);
  });
});
