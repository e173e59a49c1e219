/**
 * A capture's proxy choice (`proxy`, `proxy_country`) as a route out (docs/proxies.md): the
 * operator's proxies from PROXIES_FILE, each country's served in turn, or the caller's own
 * URL, judged by the egress rules when connected to. Each route has a key: the contexts of a
 * client on the same route share it, and no other context does.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { OperatorProxy } from '../../config/proxies-file.ts';
import { parseProxyUrl } from '../../domain/captures/proxy-url.ts';
import type { ProxyChoice } from '../../domain/captures/renderer.ts';
import { AppError } from '../../domain/errors.ts';
import type { ProxyRoute } from './proxy/upstream-proxy.ts';

export interface KeyedRoute {
  route: ProxyRoute;
  /** Never the URL: a digest of it, for the caller's own proxy. */
  key: string;
}

export class ProxyRoutes {
  readonly #byId: ReadonlyMap<string, OperatorProxy>;
  readonly #turns = new Map<string, number>();
  readonly #key = randomBytes(32);

  constructor(proxies: readonly OperatorProxy[]) {
    this.#byId = new Map(proxies.map((p) => [p.id, p]));
  }

  /** The route of a choice the domain let through (an unknown id is a 400 before this). */
  routeFor(choice: ProxyChoice): KeyedRoute {
    if (choice.kind === 'url') {
      const address = parseProxyUrl(choice.url, 'proxy');
      // Keyed by a secret of this process's: the URL holds a password, and even a digest of
      // it in memory (a heap dump) must not let it be guessed offline.
      const digest = createHmac('sha256', this.#key).update(choice.url).digest('base64url');
      return {
        route: { name: 'caller', address, judged: true, remoteDns: false, bypass: [], ca: null },
        key: `url:${digest}`,
      };
    }
    const proxy =
      choice.kind === 'operator' ? this.#byId.get(choice.id) : this.#next(choice.country);
    if (proxy === undefined) {
      const named =
        choice.kind === 'operator' ? `proxy "${choice.id}"` : `proxy_country "${choice.country}"`;
      throw new AppError('invalid_request', `${named}: no such proxy on this node`);
    }
    return {
      route: {
        name: proxy.id,
        address: proxy.address,
        judged: false,
        remoteDns: proxy.remoteDns,
        bypass: proxy.bypass,
        ca: proxy.ca,
      },
      key: `id:${proxy.id}`,
    };
  }

  /** The next of the proxies serving `country`, round robin. */
  #next(country: string): OperatorProxy | undefined {
    const serving = [...this.#byId.values()].filter((p) => p.countries.includes(country));
    if (serving.length === 0) return undefined;
    const turn = this.#turns.get(country) ?? 0;
    this.#turns.set(country, (turn + 1) % serving.length);
    return serving[turn % serving.length];
  }
}
