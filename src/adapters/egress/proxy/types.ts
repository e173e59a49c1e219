import type { Logger } from '../../../lib/logger.ts';
import type { EgressPolicy } from '../policy.ts';
import type { Lane } from './lanes.ts';
import type { ProxyRoute } from './upstream-proxy.ts';

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
  logger: Logger;
  onRefused?: (info: EgressRefusal) => void;
  /** Upstream TCP connect timeout. Default 10 s. */
  connectTimeoutMs?: number;
  /** An upstream proxy's connect and tunnel, at most (lanes). Default 10 s. */
  proxyTimeoutMs?: number;
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
  /**
   * A lane out through `route` (lanes.ts): a listener of its own, for one browser context's
   * proxy server. Closed by its owner, or with the proxy.
   */
  openLane(route: ProxyRoute): Promise<Lane>;
  /** Stops listening and destroys every open client and upstream socket. */
  close(): Promise<void>;
}
