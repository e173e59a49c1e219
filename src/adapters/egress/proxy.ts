/**
 * In-process HTTP forward proxy that every connection of the rendered page goes through
 * (Chromium: `--proxy-server=<url> --proxy-bypass-list=<-loopback>`). For each CONNECT tunnel,
 * absolute-URI request or plain-HTTP Upgrade it resolves the host once (checkDestination), then
 * connects to the CHECKED address, never to the name, so DNS rebinding has no window.
 *
 * The parts, under proxy/: server.ts routes each client request to its path, connect.ts
 * (CONNECT tunnels), forward.ts (plain http: requests) and upgrade.ts (ws: upgrades);
 * tunnel.ts is what CONNECT and Upgrade share, destination.ts the one destination check,
 * upstream.ts the connections to checked addresses, responses.ts the proxy's own answers
 * (refusals, 502, 503, 400), parse.ts request targets and forwardable headers.
 */
import { canonicalIp, classifyAddress } from './address.ts';
import { createProxyContext } from './proxy/context.ts';
import { type Lane, openLane } from './proxy/lanes.ts';
import { createProxyServer } from './proxy/server.ts';
import type { EgressProxy, EgressProxyOptions } from './proxy/types.ts';

export type { Lane } from './proxy/lanes.ts';
export type {
  EgressProxy,
  EgressProxyOptions,
  EgressRefusal,
  EgressStats,
} from './proxy/types.ts';
export type { ProxyRoute } from './proxy/upstream-proxy.ts';

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
  const ctx = createProxyContext(options);
  const server = createProxyServer(ctx, options.maxHeaderSize ?? 16 * 1024);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: listenAddress, port: options.port ?? 0, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (err) => ctx.logger.warn({ err: err.message }, 'egress proxy server error'));

  const address = server.address();
  ctx.ownPort = typeof address === 'object' && address !== null ? address.port : 0;
  const url = listenAddress.includes(':')
    ? `http://[${listenAddress}]:${ctx.ownPort}`
    : `http://${listenAddress}:${ctx.ownPort}`;

  let closed: Promise<void> | undefined;
  const lanes = new Set<Lane>();
  return {
    url,
    port: ctx.ownPort,
    stats: () => ({ allowed: ctx.allowed, refused: ctx.refused, open: ctx.upstreams.size }),
    openLane: async (route) => {
      const lane = await openLane(ctx, server, route);
      lanes.add(lane);
      return {
        url: lane.url,
        remoteDns: lane.remoteDns,
        takeFailure: () => lane.takeFailure(),
        close: () => {
          lanes.delete(lane);
          return lane.close();
        },
      };
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        ctx.closing = true;
        for (const lane of lanes) void lane.close();
        server.close(() => resolve());
        for (const s of ctx.upstreams) s.destroy();
        for (const s of ctx.clients) s.destroy();
        server.closeAllConnections();
      });
      return closed;
    },
  };
}
