/**
 * The renderer behind the real egress proxy: every connection of the page, loopback included,
 * goes through it. An allowlisted fixture on 127.0.0.1 renders; a "canary" on 127.0.0.2 is not
 * allowlisted and counts every TCP connection it receives, which must stay at zero whatever
 * the page tries (subresource, fetch, WebSocket, iframe, redirect, direct URL).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type EgressPolicy, parseAllowlist } from '../../src/adapters/egress/policy.ts';
import { type EgressProxy, startEgressProxy } from '../../src/adapters/egress/proxy.ts';
import { checkTargetUrl } from '../../src/adapters/egress/url-check.ts';
import { silentLogger } from '../../src/lib/logger.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import {
  assertColor,
  decodeImage,
  rejectsWith,
  solidPng,
  startRenderer,
  type TestRenderer,
} from './helpers.ts';

describe('rendering through the egress proxy', () => {
  let canary: Server;
  let canaryPort = 0;
  let canaryConnections = 0;
  const canarySockets = new Set<Socket>();
  let site: FixtureSite;
  let proxy: EgressProxy;
  let t: TestRenderer;
  let closedPort = 0;

  before(async () => {
    canary = createServer((socket) => {
      canaryConnections++;
      canarySockets.add(socket);
      socket.on('close', () => canarySockets.delete(socket));
      socket.end('HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 0\r\n\r\n');
    });
    await new Promise<void>((resolve) => canary.listen(0, '127.0.0.2', resolve));
    const address = canary.address();
    canaryPort = typeof address === 'object' && address ? address.port : 0;
    const canaryUrl = `http://127.0.0.2:${canaryPort}`;

    site = await startSite({
      '/': page('<p>through the proxy</p>', '<style>body{background:rgb(0,200,0)}</style>'),
      '/green.png': (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(50, 50, [0, 200, 0]));
      },
      '/mixed': page(
        `<img src="/green.png" width="50" height="50" style="display:block">
         <img src="${canaryUrl}/pixel.png" width="50" height="50" style="display:block">
         <iframe src="${canaryUrl}/frame"></iframe>
         <script>
           fetch('${canaryUrl}/data').catch(() => {});
           try { new WebSocket('ws://127.0.0.2:${canaryPort}/ws'); } catch {}
           navigator.sendBeacon('${canaryUrl}/beacon', 'x');
         </script>`,
      ),
      '/to-canary': (_req: IncomingMessage, res: ServerResponse) => {
        res.writeHead(302, { location: `${canaryUrl}/` }).end();
      },
    });
    closedPort = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const a = probe.address();
        probe.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    });
    const policy: EgressPolicy = {
      allowlist: parseAllowlist(`${site.hostPort},127.0.0.1:${closedPort}`),
      selfPorts: [],
    };
    proxy = await startEgressProxy({ policy, logger: silentLogger });
    t = await startRenderer({
      proxyUrl: proxy.url,
      checkNavigation: async (url) => {
        await checkTargetUrl(policy, url);
      },
    });
  });
  after(async () => {
    await t?.close();
    await proxy?.close();
    await site?.close();
    for (const socket of canarySockets) socket.destroy();
    await new Promise((resolve) => canary?.close(resolve));
  });

  it('an allowlisted loopback target renders, and its traffic went through the proxy', async () => {
    const before = proxy.stats().allowed;
    const result = await t.render({ url: `${site.origin}/` });
    assert.equal(result.targetStatus, 200);
    assertColor(decodeImage(result.image), 200, 150, [0, 200, 0], 'page');
    assert.ok(proxy.stats().allowed > before, 'the proxy saw the page load');
  });

  it('subresources, fetches, frames, beacons and WebSockets to a refused address never connect', async () => {
    const refusedBefore = proxy.stats().refused;
    const result = await t.render({ url: `${site.origin}/mixed` });
    assert.equal(result.targetStatus, 200);
    assertColor(decodeImage(result.image), 25, 25, [0, 200, 0], 'allowed image rendered');
    assert.ok(proxy.stats().refused > refusedBefore, 'the proxy refused the canary');
    assert.equal(canaryConnections, 0);
  });

  it('a main-document redirect to a refused address is url_not_allowed', async () => {
    await rejectsWith(t.render({ url: `${site.origin}/to-canary` }), 'url_not_allowed');
    assert.equal(canaryConnections, 0);
  });

  it('an allowed target that refuses the connection is target_unreachable, not the proxy page', async () => {
    await rejectsWith(
      t.render({ url: `http://127.0.0.1:${closedPort}/` }),
      'target_unreachable',
      new RegExp(`could not reach 127\\.0\\.0\\.1:${closedPort}`),
    );
  });

  it('a refused address as the target itself is url_not_allowed', async () => {
    await rejectsWith(t.render({ url: `http://127.0.0.2:${canaryPort}/` }), 'url_not_allowed');
    assert.equal(canaryConnections, 0);
  });
});
