/**
 * The egress decision (docs/egress.md): may the service, or a page it renders, open a
 * connection to host:port? A name is resolved exactly once here and the caller connects to the
 * address that was checked, so there is no DNS-rebinding window.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { BOUNDS } from '../../domain/bounds.ts';
import { AppError, isAppError } from '../../domain/errors.ts';
import {
  canonicalIp,
  classifyAddress,
  embeddedIpv4,
  isValidHostName,
  parseHostLiteral,
  unmapIp,
} from './address.ts';
import { DnsBusyError, DnsCache, LookupBound } from './dns-cache.ts';
import { systemResolver } from './resolver.ts';

export interface EgressPolicy {
  /** `host:port` entries (see parseAllowlist) let named private targets through. */
  allowlist: ReadonlySet<string>;
  /** The service's own listening ports: never reachable on a local address, allowlisted or not. */
  selfPorts: readonly number[];
  /**
   * A name's addresses, the lookup counted against `client` (`user:<id>`, `demo:<ip>`, or the
   * proxy's own). createEgress (guard.ts) wires a DnsCache; default: a process-wide one on the
   * system resolver.
   */
  resolve?: (hostname: string, client: string) => Promise<string[]>;
  /**
   * The machine's own interface addresses (canonical, IPv4-mapped forms unmapped), which
   * count as loopback. Default: systemInterfaceAddresses(); tests inject a list.
   */
  localAddresses?: () => ReadonlySet<string>;
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

/** Addresses in canonical form, IPv4-mapped ones unmapped; what is not an address is skipped. */
export function addressSet(list: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const address of list) {
    const canonical = canonicalIp(address);
    if (canonical !== null) out.add(unmapIp(canonical));
  }
  return out;
}

function localInterfaceAddresses(): Set<string> {
  return addressSet(
    Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address)),
  );
}

/**
 * Whether an address is one of the machine's own, also when an IPv6 form carries it
 * (IPv4-mapped, NAT64, 6to4: whatever the classifier reads an IPv4 address out of).
 */
export function isLocalAddress(policy: EgressPolicy, canonical: string): boolean {
  const own = (policy.localAddresses ?? systemInterfaceAddresses)();
  if (own.has(unmapIp(canonical))) return true;
  const embedded = embeddedIpv4(canonical);
  return embedded !== null && own.has(embedded);
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
  return isLocalAddress(policy, plain);
}

/** The interface list, re-read at most this often (interfaces come and go). */
const INTERFACES_REFRESH_MS = 5_000;
let interfacesReadAt = Number.NEGATIVE_INFINITY;
let interfaces: ReadonlySet<string> = new Set();

/** The machine's own interface addresses, canonical and unmapped, re-read every few seconds. */
export function systemInterfaceAddresses(): ReadonlySet<string> {
  const now = performance.now();
  if (now - interfacesReadAt >= INTERFACES_REFRESH_MS) {
    interfaces = localInterfaceAddresses();
    interfacesReadAt = now;
  }
  return interfaces;
}

let defaultDns: { cache: DnsCache; bound: LookupBound } | undefined;

/** Without an injected resolve: one process-wide cache over the system resolver. */
function defaultResolve(hostname: string, client: string): Promise<string[]> {
  defaultDns ??= {
    cache: new DnsCache({ resolver: systemResolver() }),
    bound: new LookupBound({ perClient: BOUNDS.dns.perClient, total: BOUNDS.dns.total }),
  };
  return defaultDns.cache.lookup(hostname, defaultDns.bound, client);
}

const CATEGORY_PHRASES: Record<string, string> = {
  'carrier-grade-nat': 'a carrier-grade NAT',
  'non-public': 'a non-public',
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
 * How a refused host is named in messages: as the client wrote it (trimmed, without brackets,
 * printable ASCII, bounded), never the address it was resolved or decoded to.
 */
function shownHost(host: string): string {
  let h = host.trim();
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  let out = '';
  for (const ch of h.slice(0, 255)) {
    const c = ch.charCodeAt(0);
    out += c > 0x20 && c < 0x7f ? ch : '?';
  }
  return out === '' ? '(empty)' : out;
}

/** The client a lookup is counted against when the caller names none. */
const SERVICE_CLIENT = 'service';

/**
 * Decides whether a connection to host:port may be made, and to which address. Literal hosts
 * (in any encoding) skip DNS; `localhost` and `*.localhost` are loopback without asking DNS;
 * `*.invalid` does not resolve without asking either; any other name is resolved once (through the DNS cache, the lookup counted against
 * `client`), the first address is returned, and the destination is refused if ANY of the
 * returned addresses is not allowed. Non-public addresses, and the machine's own interface
 * addresses, are refused unless allowlisted; the service's own ports are always refused.
 *
 * Throws AppError `url_not_allowed` on refusal, `target_unreachable` when the name does not
 * resolve, and `overloaded` (Retry-After) when no lookup slot was had in time. Messages name the host as given and the reason class, never an address.
 */
export async function checkDestination(
  policy: EgressPolicy,
  host: string,
  port: number,
  client: string = SERVICE_CLIENT,
): Promise<CheckedDestination> {
  const known = screenDestination(policy, host, port);
  if (known !== null) return known;
  const name = normalizeHost(host);
  const shown = shownHost(host);
  // RFC 6761: names under .invalid never resolve, so none is asked (a document capture's
  // placeholder address is one; Chromium may preconnect to it before its request is answered).
  if (name === 'invalid' || name.endsWith('.invalid')) {
    throw new AppError('target_unreachable', `could not resolve host ${shown}`);
  }
  let resolved: string[];
  try {
    resolved = await (policy.resolve ?? defaultResolve)(name, client);
  } catch (err) {
    if (isAppError(err)) throw err;
    // The client's own lookups filled its bound: busy, not a name that does not resolve.
    if (err instanceof DnsBusyError) {
      throw new AppError('overloaded', 'too many host name lookups in flight; retry shortly', {
        headers: { 'Retry-After': '2' },
        cause: err,
      });
    }
    throw new AppError('target_unreachable', `could not resolve host ${shown}`, { cause: err });
  }
  const addresses: string[] = [];
  for (const a of resolved) {
    const canonical = canonicalIp(a);
    if (canonical === null) {
      throw new AppError('url_not_allowed', `url host ${shown} resolves to an invalid address`);
    }
    addresses.push(canonical);
  }
  if (addresses.length === 0) {
    throw new AppError('target_unreachable', `could not resolve host ${shown}`);
  }
  return judge(policy, name, shown, addresses, port, 'resolves to');
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
  const shown = shownHost(host);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new AppError('url_not_allowed', `url port ${port} is not allowed`);
  }
  if (isIP(name) !== 0) return judge(policy, name, shown, [name], port, 'is');
  if (!isValidHostName(name)) {
    throw new AppError('url_not_allowed', `url host ${shown} is not a valid host name`);
  }
  if (isLocalhostName(name)) {
    return judge(policy, name, shown, ['127.0.0.1'], port, 'resolves to');
  }
  return null;
}

/**
 * The verdict on every address of a destination. An address of the machine's own interfaces
 * is refused whatever its range (a public address bound by a local service is still the
 * host), unless allowlisted; this service's own ports never pass. The message says which class
 * refused it (its range's, or "non-public" for an own public address), never which address.
 */
function judge(
  policy: EgressPolicy,
  name: string,
  shown: string,
  addresses: readonly string[],
  port: number,
  verb: 'is' | 'resolves to',
): CheckedDestination {
  for (const address of addresses) {
    // This service and the machine's own addresses are refused like any address of their
    // range; the text never tells them apart (a page could map the host's ports or addresses
    // through the refusal page drawn in its screenshot).
    const self = isSelf(policy, address, port);
    const verdict = classifyAddress(address);
    const refused = self || !verdict.allowed || isLocalAddress(policy, address);
    if (refused && (self || !isAllowlisted(policy, name, address, port))) {
      const category = verdict.allowed ? 'non-public' : verdict.category;
      throw new AppError(
        'url_not_allowed',
        `url host ${shown} ${verb} ${describe(category)} address`,
      );
    }
  }
  const address = addresses[0] as string;
  return { address, family: isIP(address) === 6 ? 6 : 4 };
}
