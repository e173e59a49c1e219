import type { Socket } from 'node:net';
import type { Logger } from '../../../lib/logger.ts';
import type { EgressPolicy } from '../policy.ts';
import type { LaneState } from './lanes.ts';
import type { EgressProxyOptions, EgressRefusal } from './types.ts';

/**
 * What every path of one proxy instance shares: its settings, the sockets it holds open and
 * its counters. Built once by startEgressProxy and handed to each handler explicitly.
 */
export interface ProxyContext {
  readonly policy: EgressPolicy;
  readonly logger: Logger;
  readonly onRefused: ((info: EgressRefusal) => void) | undefined;
  readonly connectTimeoutMs: number;
  /** An upstream proxy's connect and tunnel, at most (upstream-proxy.ts). */
  readonly proxyTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** Client connections open now (Chromium's side). */
  readonly clients: Set<Socket>;
  /** Upstream connections open now (the destinations' side). */
  readonly upstreams: Set<Socket>;
  allowed: number;
  refused: number;
  /** The proxy's own port, known once it listens. */
  ownPort: number;
  /** Set by close(): new connections and upstreams are refused from then on. */
  closing: boolean;
  /** Client connections that came in on a lane (lanes.ts), with their lane. */
  readonly lanes: WeakMap<Socket, LaneState>;
}

export function createProxyContext(options: EgressProxyOptions): ProxyContext {
  return {
    policy: options.policy,
    logger: options.logger,
    onRefused: options.onRefused,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    proxyTimeoutMs: options.proxyTimeoutMs ?? 10_000,
    idleTimeoutMs: options.idleTimeoutMs ?? 120_000,
    maxConnections: options.maxConnections ?? 256,
    clients: new Set(),
    upstreams: new Set(),
    allowed: 0,
    refused: 0,
    ownPort: 0,
    closing: false,
    lanes: new WeakMap(),
  };
}

/** Upstream connections are bounded like client ones: past the bound a request gets a 503. */
export const tooBusy = (ctx: ProxyContext): boolean => ctx.upstreams.size >= ctx.maxConnections;
