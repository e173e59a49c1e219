/**
 * The egress proxy's lanes (docs/proxies.md) without a browser: a client speaks to a lane as
 * Chromium does (CONNECT for https, absolute-form for http), and the lane goes out through a
 * real upstream proxy on loopback (test/helpers/proxies.ts). A TLS target is reached end to end
 * through CONNECT; the upstream's failures are kept on the lane in words; the caller's own
 * proxy is judged by the egress rules. Every connection stays on 127.0.0.0/8.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { parseAllowlist } from '../../src/adapters/egress/policy.ts';
import {
  type EgressProxy,
  type ProxyRoute,
  startEgressProxy,
} from '../../src/adapters/egress/proxy.ts';
import { parseProxyUrl } from '../../src/domain/captures/proxy-url.ts';
import { silentLogger } from '../../src/lib/logger.ts';
import { type FixtureSite, startSite } from '../helpers/fixtures.ts';
import {
  makeTestCertificate,
  startHttpProxy,
  startSocks5Proxy,
  type TestProxy,
} from '../helpers/proxies.ts';

const AUTH = { username: 'lane', password: 'lane-pass' };
const HOSTS = { 'shop.test': '127.0.0.1' };

const route = (url: string, extra: Partial<ProxyRoute> = {}): ProxyRoute => ({
  name: 'test',
  address: parseProxyUrl(url, 'url'),
  judged: false,
  remoteDns: true,
  bypass: [],
  ca: null,
  ...extra,
});

/** A CONNECT asked of `lane`; resolves with the socket and the answer's status line. */
function connectThrough(
  lane: string,
  authority: string,
): Promise<{ socket: Socket; status: string }> {
  const { port } = new URL(lane);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
    });
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      socket.off('data', onData);
      resolve({ socket, status: head.slice(0, head.indexOf('\r\n')) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
}

/** A plain request in absolute form through `lane`. */
function getThrough(
  lane: string,
  url: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const { port } = new URL(lane);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: url, headers: { host: new URL(url).host } },
      (res) => {
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.once('error', reject);
    req.end();
  });
}

describe('egress lanes through upstream proxies', () => {
  let egress: EgressProxy;
  let site: FixtureSite;
  let tlsSite: Server;
  let tlsPort = 0;
  let ca = '';
  const proxies: Record<string, TestProxy> = {};

  before(async () => {
    site = await startSite({ '/hello': '<p>hello</p>' });
    const cert = makeTestCertificate();
    ca = cert.ca;
    tlsSite = createHttpsServer({ key: cert.key, cert: cert.cert }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('secure hello');
    });
    await new Promise<void>((resolve) => tlsSite.listen(0, '127.0.0.1', resolve));
    const address = tlsSite.address();
    tlsPort = typeof address === 'object' && address ? address.port : 0;
    proxies.http = await startHttpProxy({ auth: AUTH, hosts: HOSTS });
    proxies.socks = await startSocks5Proxy({ auth: AUTH, hosts: HOSTS });
    proxies.silent = await startHttpProxy({ mode: 'hang', hosts: HOSTS });
    egress = await startEgressProxy({
      policy: { allowlist: parseAllowlist(`127.0.0.1:${proxies.http.port}`), selfPorts: [] },
      logger: silentLogger,
      proxyTimeoutMs: 600,
    });
  });
  after(async () => {
    await egress?.close();
    for (const proxy of Object.values(proxies)) await proxy.close();
    tlsSite?.closeAllConnections();
    await new Promise<void>((resolve) => tlsSite?.close(() => resolve()));
    await site?.close();
  });

  it('CONNECT through an HTTP proxy with Basic auth reaches a TLS target end to end', async () => {
    const http = proxies.http as TestProxy;
    const lane = await egress.openLane(route(http.url));
    try {
      const { socket, status } = await connectThrough(lane.url, `shop.test:${tlsPort}`);
      assert.match(status, / 200 /);
      const secure = tlsConnect({ socket, ca, servername: 'localhost' });
      await new Promise<void>((resolve, reject) => {
        secure.once('secureConnect', resolve);
        secure.once('error', reject);
      });
      secure.write('GET / HTTP/1.1\r\nHost: shop.test\r\nConnection: close\r\n\r\n');
      let answer = '';
      for await (const chunk of secure) answer += String(chunk);
      assert.match(answer, /secure hello/);
      assert.ok(
        http.records.some(
          (r) => r.kind === 'connect' && r.target === `shop.test:${tlsPort}` && r.authorized,
        ),
      );
      assert.equal(lane.takeFailure(), null);
    } finally {
      await lane.close();
    }
  });

  it('a plain request through SOCKS5 with a password, by name', async () => {
    const socks = proxies.socks as TestProxy;
    const lane = await egress.openLane(route(socks.url.replace('socks5:', 'socks5h:')));
    try {
      const answer = await getThrough(lane.url, `http://shop.test:${site.port}/hello`);
      assert.equal(answer.status, 200);
      assert.match(answer.body, /hello/);
      assert.ok(
        socks.records.some(
          (r) => r.target === `shop.test:${site.port}` && r.addressType === 'domain',
        ),
      );
    } finally {
      await lane.close();
    }
  });

  it('keeps what failed upstream on the lane, in words, never the credentials', async () => {
    const http = proxies.http as TestProxy;
    const cases: Array<[ProxyRoute, RegExp]> = [
      [route(http.url.replace('lane-pass', 'nope')), /^proxy authentication failed$/],
      [route('http://127.0.0.1:9'), /^proxy could not be reached$/],
      [route((proxies.silent as TestProxy).url), /^proxy timed out$/],
    ];
    for (const [r, message] of cases) {
      const lane = await egress.openLane(r);
      try {
        const { socket, status } = await connectThrough(lane.url, `shop.test:${tlsPort}`);
        socket.destroy();
        assert.match(status, / 502 /);
        assert.match(lane.takeFailure() ?? '', message);
        const plain = await getThrough(lane.url, `http://shop.test:${site.port}/hello`);
        assert.equal(plain.status, 502);
        assert.match(String(plain.headers['x-egress-proxy-error']), message);
        assert.ok(!plain.body.includes('nope'));
      } finally {
        await lane.close();
      }
    }
  });

  it("judges the caller's own proxy by the egress rules, and private targets on every lane", async () => {
    const http = proxies.http as TestProxy;
    // Listed in the allowlist: reachable. The same proxy by another loopback name: refused.
    const listed = await egress.openLane(route(http.url, { judged: true, remoteDns: false }));
    const unlisted = await egress.openLane(
      route(http.url.replace('127.0.0.1', '127.0.0.2'), { judged: true, remoteDns: false }),
    );
    try {
      const before = http.connections;
      const refused = await getThrough(unlisted.url, 'http://93.184.215.14/');
      assert.equal(refused.status, 502);
      assert.match(
        unlisted.takeFailure() ?? '',
        /^proxy could not be reached: proxy host 127\.0\.0\.2 /,
      );
      // A private literal target never leaves, through any lane.
      const privateTarget = await getThrough(listed.url, 'http://10.0.0.1/');
      assert.equal(privateTarget.status, 403);
      assert.equal(http.connections, before, 'nothing reached the proxy');
    } finally {
      await listed.close();
      await unlisted.close();
    }
  });
});
