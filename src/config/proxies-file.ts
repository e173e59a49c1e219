/**
 * PROXIES_FILE (docs/proxies.md): the operator's upstream proxies, a JSON list of
 * `{id, url, countries?, bypass?, remote_dns?, ca?}`. Read once at boot; every problem is
 * reported at once, naming the entry, never its URL (which may hold a password).
 */
import { readFileSync } from 'node:fs';
import {
  PROXY_ID_PATTERN,
  type ProxyAddress,
  parseProxyUrl,
} from '../domain/captures/proxy-url.ts';
import { isAppError } from '../domain/errors.ts';

export interface OperatorProxy {
  id: string;
  /** Credentials included: never logged, never answered. */
  address: ProxyAddress;
  /** ISO 3166-1 alpha-2, lower case. */
  countries: string[];
  /** Host names (lower case; `*.example.com` for its subdomains too) that go out directly. */
  bypass: string[];
  /** Target names are handed to the proxy unresolved: its network resolves them. */
  remoteDns: boolean;
  /** PEM certificates trusted for an `https://` proxy besides the system's; null: none. */
  ca: string | null;
}

/** At most this many proxies in the file. */
const MAX_PROXIES = 1_000;
const FIELDS = new Set(['id', 'url', 'countries', 'bypass', 'remote_dns', 'ca']);

/** The file's proxies, or the problems found (each naming the entry by index and id). */
export function readProxiesFile(file: string): { proxies: OperatorProxy[]; problems: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    return { proxies: [], problems: [`PROXIES_FILE ${file}: ${(err as Error).message}`] };
  }
  if (!Array.isArray(parsed) || parsed.length > MAX_PROXIES) {
    return {
      proxies: [],
      problems: [`PROXIES_FILE ${file} must be a JSON list of at most ${MAX_PROXIES} proxies`],
    };
  }
  const problems: string[] = [];
  const proxies: OperatorProxy[] = [];
  const ids = new Set<string>();
  parsed.forEach((entry: unknown, i) => {
    const where = `PROXIES_FILE entry ${i}`;
    const checked = checkEntry(entry, where, ids);
    if (typeof checked === 'string') problems.push(checked);
    else {
      ids.add(checked.id);
      proxies.push(checked);
    }
  });
  return { proxies, problems };
}

function checkEntry(
  entry: unknown,
  where: string,
  ids: ReadonlySet<string>,
): OperatorProxy | string {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return `${where} must be an object`;
  }
  const e = entry as Record<string, unknown>;
  const unknown = Object.keys(e).find((k) => !FIELDS.has(k));
  if (unknown !== undefined) return `${where}: unknown field "${unknown.slice(0, 40)}"`;
  if (typeof e.id !== 'string' || !PROXY_ID_PATTERN.test(e.id)) {
    return `${where}: id must be 1 to 64 letters, digits, ".", "_" or "-"`;
  }
  const named = `${where} ("${e.id}")`;
  if (ids.has(e.id)) return `${named}: the id is used twice`;
  if (typeof e.url !== 'string') return `${named}: url must be a proxy URL`;
  let address: ProxyAddress;
  try {
    address = parseProxyUrl(e.url, 'url');
  } catch (err) {
    return `${named}: ${isAppError(err) ? err.message : 'url is not a valid proxy URL'}`;
  }
  const countries = stringList(e.countries);
  if (countries === null || !countries.every((c) => /^[A-Za-z]{2}$/.test(c))) {
    return `${named}: countries must be a list of ISO 3166-1 alpha-2 codes such as "de"`;
  }
  const bypass = stringList(e.bypass);
  if (bypass === null || !bypass.every((h) => /^(\*\.)?[A-Za-z0-9.-]{1,253}$/.test(h))) {
    return `${named}: bypass must be a list of host names (*.example.com for subdomains)`;
  }
  if (e.remote_dns !== undefined && typeof e.remote_dns !== 'boolean') {
    return `${named}: remote_dns must be true or false`;
  }
  let ca: string | null = null;
  if (e.ca !== undefined) {
    if (typeof e.ca !== 'string') return `${named}: ca must be the path of a PEM file`;
    try {
      ca = readFileSync(e.ca, 'utf8');
    } catch (err) {
      return `${named}: cannot read ca ${e.ca}: ${(err as Error).message}`;
    }
  }
  return {
    id: e.id,
    address,
    countries: countries.map((c) => c.toLowerCase()),
    bypass: bypass.map((h) => h.toLowerCase()),
    remoteDns: e.remote_dns === true,
    ca,
  };
}

/** A list of strings ([] when absent), or null when it is something else. */
function stringList(value: unknown): string[] | null {
  if (value === undefined) return [];
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
}
