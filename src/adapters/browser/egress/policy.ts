/**
 * The egress decision (DECISIONS.md section 4): may the service, or a page it renders, open a
 * connection to host:port? A name is resolved exactly once here and the caller connects to the
 * address that was checked, so there is no DNS-rebinding window.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { AppError, isAppError } from '../../../domain/errors.ts';
import {
  canonicalIp,
  classifyAddress,
  isValidHostName,
  parseHostLiteral,
  unmapIp,
} from './address.ts';

export interface EgressPolicy {
  /** `host:port` entries (see parseAllowlist) let named private targets through. */
  allowlist: ReadonlySet<string>;
  /** The service's own listening ports: never reachable on a local address, allowlisted or not. */
  selfPorts: readonly number[];
  /** Name resolution, for tests. Default: dns.promises.lookup(host, { all: true, verbatim: true }). */
  resolve?: (hostname: string) => Promise<string[]>;
}

export interface CheckedDestination {
  /** The address to connect to: canonical IPv4 dotted decimal or IPv6 text without brackets. */
  address: string;
  family: 4 | 6;
}

/** `host:port` key as stored in an allowlist: lowercase, IPv6 bracketed, literals canonical. */
function entryKey(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Lowercase, no brackets, no trailing dot, a literal IP in canonical form. */
function normalizeHost(host: string): string {
  const h = host.trim().toLowerCase();
  const literal = parseHostLiteral(h);
  if (literal !== null) return literal;
  return h.endsWith('.') ? h.slice(0, -1) : h;
}

function parsePort(text: string): number | null {
  if (text.length === 0 || text.length > 5) return null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * Parses `EGRESS_ALLOWLIST`: comma-separated `host:port` entries (`intranet.example:8080`,
 * `127.0.0.1:3000`, `[::1]:8080`). Whitespace and empty entries are ignored; names are
 * lowercased and IP literals canonicalised (`127.1:80` is stored as `127.0.0.1:80`). A malformed
 * entry throws an Error naming it.
 */
export function parseAllowlist(csv: string): Set<string> {
  const out = new Set<string>();
  for (const raw of csv.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    const bad = (why: string): Error =>
      new Error(`invalid EGRESS_ALLOWLIST entry "${raw.trim()}": ${why}`);
    let host: string;
    let portText: string;
    if (entry.startsWith('[')) {
      const close = entry.indexOf(']');
      if (close === -1) throw bad('unclosed [');
      host = entry.slice(1, close);
      if (isIP(host) !== 6) throw bad('expected an IPv6 address inside [ ]');
      if (entry[close + 1] !== ':') throw bad('expected host:port');
      portText = entry.slice(close + 2);
    } else {
      const colon = entry.lastIndexOf(':');
      if (colon === -1) throw bad('expected host:port');
      host = entry.slice(0, colon);
      portText = entry.slice(colon + 1);
      if (host.includes(':')) throw bad('write IPv6 addresses in brackets, as [::1]:8080');
    }
    const port = parsePort(portText);
    if (port === null) throw bad('port must be an integer from 1 to 65535');
    const literal = parseHostLiteral(host);
    if (literal === null && !isValidHostName(host)) throw bad('not a valid host name');
    out.add(entryKey(literal ?? normalizeHost(host), port));
  }
  return out;
}

/**
 * Whether an allowlist entry covers this destination: its host equals the URL's host name or
 * the resolved address (also the IPv4 form of an IPv4-mapped address), and its port matches.
 */
export function isAllowlisted(
  policy: EgressPolicy,
  host: string,
  address: string,
  port: number,
): boolean {
  if (policy.allowlist.size === 0) return false;
  const candidates = new Set<string>([normalizeHost(host)]);
  const canonical = canonicalIp(address);
  if (canonical !== null) {
    candidates.add(canonical);
    candidates.add(unmapIp(canonical));
  }
  for (const h of candidates) {
    if (policy.allowlist.has(entryKey(h, port))) return true;
  }
  return false;
}

function localInterfaceAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) {
      const canonical = canonicalIp(info.address);
      if (canonical !== null) out.add(unmapIp(canonical));
    }
  }
  return out;
}

/**
 * Whether address:port is this service itself: one of its listening ports on a loopback,
 * unspecified (0.0.0.0/8, ::) or local-interface address, IPv4-mapped forms included.
 */
export function isSelf(policy: EgressPolicy, address: string, port: number): boolean {
  if (!policy.selfPorts.includes(port)) return false;
  const canonical = canonicalIp(address);
  if (canonical === null) return false;
  const plain = unmapIp(canonical);
  const { category } = classifyAddress(plain);
  if (category === 'loopback' || category === 'unspecified' || category === 'this-network') {
    return true;
  }
  return localInterfaceAddresses().has(plain);
}

/**
 * Bounds on name resolution. getaddrinfo runs on libuv's thread pool (four threads, shared
 * with disk storage and password hashing), and a hostile page can ask for many slow names:
 * at most DNS_MAX_IN_FLIGHT lookups hold a thread at once (a slot is freed when the lookup
 * really ends, not when we stop waiting), and an answer, queue wait included, must come
 * within DNS_TIMEOUT_MS or the destination is unreachable.
 */
const DNS_TIMEOUT_MS = 5_000;
const DNS_MAX_IN_FLIGHT = 2;
let dnsInFlight = 0;
const dnsWaiting: Array<() => void> = [];

function releaseDnsSlot(): void {
  const next = dnsWaiting.shift();
  if (next) next();
  else dnsInFlight--;
}

const defaultResolve = (hostname: string): Promise<string[]> =>
  new Promise<string[]>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => {
      settled = true;
      const queued = dnsWaiting.indexOf(start);
      if (queued !== -1) dnsWaiting.splice(queued, 1);
      reject(new Error(`no DNS answer for ${hostname} within ${DNS_TIMEOUT_MS} ms`));
    }, DNS_TIMEOUT_MS);
    function start(): void {
      lookup(hostname, { all: true, verbatim: true }).then(
        (results) => {
          clearTimeout(timer);
          if (!settled) resolve(results.map((r) => r.address));
          settled = true;
          releaseDnsSlot();
        },
        (err: unknown) => {
          clearTimeout(timer);
          if (!settled) reject(err);
          settled = true;
          releaseDnsSlot();
        },
      );
    }
    if (dnsInFlight < DNS_MAX_IN_FLIGHT) {
      dnsInFlight++;
      start();
    } else {
      dnsWaiting.push(start);
    }
  });

const CATEGORY_PHRASES: Record<string, string> = {
  'carrier-grade-nat': 'a carrier-grade NAT',
  'cloud-metadata': 'a cloud metadata',
  'ietf-protocol': 'an IETF protocol assignment',
  'link-local': 'a link-local',
  'site-local': 'a site-local',
  'ipv4-compatible': 'an IPv4-compatible',
  'nat64-local': 'a local-use NAT64',
  'this-network': 'a "this network"',
  '6to4-relay': 'a 6to4 relay anycast',
  srv6: 'an SRv6 SID',
  teredo: 'a Teredo',
  unspecified: 'an unspecified',
  invalid: 'an invalid',
};

function describe(category: string): string {
  return CATEGORY_PHRASES[category] ?? `a ${category.replaceAll('-', ' ')}`;
}

function isLocalhostName(name: string): boolean {
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Decides whether a connection to host:port may be made, and to which address. Literal hosts
 * (in any encoding) skip DNS; `localhost` and `*.localhost` are loopback without asking DNS;
 * any other name is resolved once, the first address is returned, and the destination is
 * refused if ANY of the returned addresses is not allowed. Non-public addresses are refused
 * unless allowlisted; the service's own ports are always refused.
 *
 * Throws AppError `url_not_allowed` on refusal and `target_unreachable` when the name does not
 * resolve.
 */
export async function checkDestination(
  policy: EgressPolicy,
  host: string,
  port: number,
): Promise<CheckedDestination> {
  const known = screenDestination(policy, host, port);
  if (known !== null) return known;
  const name = normalizeHost(host);
  let resolved: string[];
  try {
    resolved = await (policy.resolve ?? defaultResolve)(name);
  } catch (err) {
    if (isAppError(err)) throw err;
    throw new AppError('target_unreachable', `could not resolve host ${name}`, { cause: err });
  }
  const addresses: string[] = [];
  for (const a of resolved) {
    const canonical = canonicalIp(a);
    if (canonical === null) {
      throw new AppError('url_not_allowed', `url host ${name} resolves to an invalid address`);
    }
    addresses.push(canonical);
  }
  if (addresses.length === 0) {
    throw new AppError('target_unreachable', `could not resolve host ${name}`);
  }
  return judge(policy, name, addresses, port, 'resolves to');
}

/**
 * Everything checkDestination decides without DNS: the port, the host name's syntax, and
 * literal or `localhost` hosts in full. Returns the checked destination when no lookup is
 * needed, null when the name must still be resolved; throws like checkDestination.
 */
export function screenDestination(
  policy: EgressPolicy,
  host: string,
  port: number,
): CheckedDestination | null {
  const name = normalizeHost(host);
  const shown = name === '' ? '(empty)' : name;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AppError('url_not_allowed', `url port ${port} is not allowed`);
  }
  if (isIP(name) !== 0) return judge(policy, name, [name], port, 'is');
  if (!isValidHostName(name)) {
    throw new AppError('url_not_allowed', `url host ${shown} is not a valid host name`);
  }
  if (isLocalhostName(name)) return judge(policy, name, ['127.0.0.1'], port, 'resolves to');
  return null;
}

function judge(
  policy: EgressPolicy,
  name: string,
  addresses: readonly string[],
  port: number,
  verb: 'is' | 'resolves to',
): CheckedDestination {
  for (const address of addresses) {
    if (isSelf(policy, address, port)) {
      throw new AppError(
        'url_not_allowed',
        `url host ${name} points at this service (${entryKey(address, port)})`,
      );
    }
    const verdict = classifyAddress(address);
    if (!verdict.allowed && !isAllowlisted(policy, name, address, port)) {
      throw new AppError(
        'url_not_allowed',
        `url host ${name} ${verb} ${describe(verdict.category)} address (${address})`,
      );
    }
  }
  const address = addresses[0] as string;
  return { address, family: isIP(address) === 6 ? 6 : 4 };
}
