/**
 * The operator's proxies as captures may name them (PROXIES_FILE, docs/proxies.md): ids and
 * the countries each serves. Never their URLs: those stay with the egress adapter.
 */
import { AppError } from '../errors.ts';
import { isProxyUrl, parseProxyUrl } from './proxy-url.ts';
import type { ProxyChoice } from './renderer.ts';

export interface ListedProxy {
  id: string;
  /** ISO 3166-1 alpha-2, lower case; empty: named by id only. */
  countries: readonly string[];
  /** It resolves target names itself (`remote_dns`): the service judges them without DNS. */
  remoteDns: boolean;
}

export class ProxyDirectory {
  readonly #byId: ReadonlyMap<string, ListedProxy>;
  readonly #countries: ReadonlySet<string>;

  constructor(proxies: readonly ListedProxy[]) {
    this.#byId = new Map(proxies.map((p) => [p.id, p]));
    this.#countries = new Set(proxies.flatMap((p) => p.countries));
  }

  /** What GET /v1/proxies shows, in the file's order. */
  list(): readonly ListedProxy[] {
    return [...this.#byId.values()];
  }

  /**
   * Whether the choice's proxy resolves the target's name itself, so that the service judges
   * only what is known without DNS (every proxy that may serve the choice does).
   */
  resolvesNames(choice: ProxyChoice | null): boolean {
    if (choice === null || choice.kind === 'url') return false;
    const serving =
      choice.kind === 'operator'
        ? [this.#byId.get(choice.id)]
        : [...this.#byId.values()].filter((p) => p.countries.includes(choice.country));
    return serving.length > 0 && serving.every((p) => p?.remoteDns === true);
  }

  /**
   * A request's choice against the operator's list: an unknown id or a country no proxy
   * serves is a 400 naming it, before any unit is taken.
   */
  check(choice: ProxyChoice | null): void {
    if (choice === null) return;
    if (choice.kind === 'operator' && !this.#byId.has(choice.id)) {
      throw new AppError(
        'invalid_request',
        `proxy "${choice.id}" is not one of this service's proxies (GET /v1/proxies lists them)`,
      );
    }
    if (choice.kind === 'country' && !this.#countries.has(choice.country)) {
      throw new AppError(
        'invalid_request',
        `proxy_country "${choice.country}": no proxy of this service serves that country ` +
          '(GET /v1/proxies lists them)',
      );
    }
  }
}

/** The host and port of a caller's own proxy, which the egress rules judge; null: none. */
export function callerProxyHost(choice: ProxyChoice | null): { host: string; port: number } | null {
  if (choice?.kind !== 'url' || !isProxyUrl(choice.url)) return null;
  const { host, port } = parseProxyUrl(choice.url, 'proxy');
  return { host, port };
}
