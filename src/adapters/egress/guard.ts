/**
 * The egress checks the service runs, built in one place: one DNS cache for every check, the
 * submitted-URL guard the capture use case calls (bounded per client), and the policy the
 * proxy and the navigation checks apply to pages being rendered (a bound of its own, so pages
 * cannot starve the checks before a render). docs/egress.md, "DNS".
 */

import { BOUNDS } from '../../domain/bounds.ts';
import type { TargetGuard } from '../../domain/captures/ports.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import { DnsCache, LookupBound } from './dns-cache.ts';
import {
  addressSet,
  checkDestination,
  type EgressPolicy,
  parseAllowlist,
  screenDestination,
} from './policy.ts';
import { type Resolver, systemResolver } from './resolver.ts';
import { checkTargetUrl, parseTargetUrl, screenTargetUrl } from './url-check.ts';

export interface EgressOptions {
  /** `EGRESS_ALLOWLIST`: comma-separated `host:port` entries (see parseAllowlist). */
  allowlist: string;
  /** The service's own listening ports. */
  selfPorts: readonly number[];
  /** Name resolution (tests: slow, dead or local names, no real DNS). Default: the system's. */
  resolver?: Resolver;
  /**
   * The machine's own interface addresses, refused like loopback unless allowlisted.
   * Default: os.networkInterfaces(), re-read every few seconds.
   */
  interfaceAddresses?: () => Iterable<string>;
}

export interface Egress {
  /** The submitted-URL checks of a capture request. */
  guard: TargetGuard;
  /** What the egress proxy and the redirect checks apply to pages being rendered. */
  pagePolicy: EgressPolicy;
  /** The same rules for webhook deliveries, with a lookup bound of their own. */
  webhookPolicy: EgressPolicy;
}

export function createEgress(options: EgressOptions): Egress {
  const dns = new DnsCache({ resolver: options.resolver ?? systemResolver() });
  const checkLookups = new LookupBound({
    perClient: BOUNDS.dns.perClient,
    total: BOUNDS.dns.total,
  });
  const pageLookups = new LookupBound({ perClient: BOUNDS.dns.proxy, total: BOUNDS.dns.proxy });
  const webhookLookups = new LookupBound({
    perClient: BOUNDS.dns.proxy,
    total: BOUNDS.dns.proxy,
  });
  const interfaceAddresses = options.interfaceAddresses;
  const checkPolicy: EgressPolicy = {
    allowlist: parseAllowlist(options.allowlist),
    selfPorts: options.selfPorts,
    resolve: (name, client) => dns.lookup(name, checkLookups, client),
    ...(interfaceAddresses ? { localAddresses: () => addressSet(interfaceAddresses()) } : {}),
  };
  return {
    guard: {
      parse: parseTargetUrl,
      screen: (url) => screenTargetUrl(checkPolicy, url),
      check: async (url, client) => {
        await checkTargetUrl(checkPolicy, url, client);
      },
      screenProxy: (host, port) => asProxyRefusal(() => screenDestination(checkPolicy, host, port)),
      checkProxy: async (host, port, client) => {
        await asProxyRefusal(() => checkDestination(checkPolicy, host, port, client));
      },
    },
    pagePolicy: {
      ...checkPolicy,
      resolve: (name) => dns.lookup(name, pageLookups, 'pages'),
    },
    webhookPolicy: {
      ...checkPolicy,
      resolve: (name) => dns.lookup(name, webhookLookups, 'webhooks'),
    },
  };
}

/**
 * The caller's own proxy judged like a target (docs/proxies.md): the same refusals, their
 * messages naming `proxy` instead of `url`.
 */
function asProxyRefusal<T>(check: () => T): T {
  const rename = (err: unknown): never => {
    if (isAppError(err) && (err.code === 'url_not_allowed' || err.code === 'target_unreachable')) {
      if (err.code === 'url_not_allowed') {
        throw new AppError('url_not_allowed', err.message.replace(/^url /, 'proxy '), {
          cause: err,
        });
      }
      throw new AppError('proxy_error', `proxy could not be reached: ${err.message}`, {
        cause: err,
      });
    }
    throw err;
  };
  try {
    const result = check();
    return result instanceof Promise ? (result.catch(rename) as T) : result;
  } catch (err) {
    return rename(err);
  }
}
