import type { Logger } from '../../../lib/logger.ts';
import type { EgressPolicy } from '../policy.ts';

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
