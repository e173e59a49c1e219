/**
 * Pure address classification for the SSRF guard (docs/egress.md).
 *
 * `classifyAddress` implements the IANA IPv4 and IPv6 Special-Purpose Address Registries (plus a
 * few cloud-metadata addresses) with prefix arithmetic: IPv4 addresses are unsigned 32-bit
 * numbers, IPv6 addresses bigints (the check runs on every capture request, cache hits
 * included, so IPv4 stays off bigints). `parseHostLiteral` turns every literal encoding of an
 * IP address that may appear in a URL host (decimal, hex, octal, short forms, bracketed IPv6,
 * IPv4-mapped IPv6) into one canonical string, so that the classifier sees the address a
 * socket would actually connect to.
 */
import { isIP } from 'node:net';

export interface AddressClass {
  allowed: boolean;
  category: string;
}

type Embedded = 'low32' | '6to4';

interface Range4 {
  /** The network's address, and the prefix mask, as unsigned 32-bit numbers. */
  readonly net: number;
  readonly mask: number;
  readonly len: number;
  readonly category: string;
}

interface Range6 {
  /** The network's prefix: the address shifted right by `shift` (128 - length) bits. */
  readonly prefix: bigint;
  readonly shift: bigint;
  readonly len: number;
  readonly category: string;
  /** For IPv6 ranges that carry an IPv4 address: classify that address instead. */
  readonly embedded?: Embedded;
}

const PUBLIC: AddressClass = { allowed: true, category: 'public' };

// ---------------------------------------------------------------------------------------------
// Byte-level parsing and formatting (input already validated by node:net isIP).

/** Dotted-quad string (validated by isIP === 4) to its value, an unsigned 32-bit number. */
function v4Value(text: string): number {
  let out = 0;
  let value = 0;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 46; // virtual trailing '.'
    if (code === 46) {
      out = out * 256 + value;
      value = 0;
    } else {
      value = value * 10 + (code - 48);
    }
  }
  return out;
}

/** An IPv4 value's four bytes, most significant first. */
function v4Bytes(value: number): number[] {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff];
}

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

function parseGroups(part: string): number[] {
  if (part === '') return [];
  const groups: number[] = [];
  let value = 0;
  for (let i = 0; i <= part.length; i++) {
    const code = i < part.length ? part.charCodeAt(i) : 58; // virtual trailing ':'
    if (code === 58) {
      groups.push(value);
      value = 0;
    } else {
      value = value * 16 + hexValue(code);
    }
  }
  return groups;
}

/** IPv6 string (validated by isIP === 6, no zone id) to its sixteen bytes. */
function v6Bytes(text: string): number[] {
  let body = text;
  let tail: number[] = [];
  const lastColon = body.lastIndexOf(':');
  if (body.indexOf('.', lastColon) !== -1) {
    tail = v4Bytes(v4Value(body.slice(lastColon + 1)));
    body = body.slice(0, lastColon + 1);
    // "::" before the dotted part leaves a trailing "::"; a single ':' must drop its separator.
    if (!body.endsWith('::')) body = body.slice(0, -1);
  }
  const gap = body.indexOf('::');
  let groups: number[];
  const tailGroups = tail.length === 4 ? 2 : 0;
  if (gap === -1) {
    groups = parseGroups(body);
  } else {
    const head = parseGroups(body.slice(0, gap));
    const rest = parseGroups(body.slice(gap + 2));
    const zeros = 8 - tailGroups - head.length - rest.length;
    groups = [...head, ...new Array<number>(Math.max(zeros, 0)).fill(0), ...rest];
  }
  const bytes: number[] = [];
  for (const g of groups) bytes.push((g >> 8) & 0xff, g & 0xff);
  bytes.push(...tail);
  return bytes;
}

function bytesToBigInt(bytes: readonly number[]): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

function formatV4(value: number): string {
  return `${value >>> 24}.${(value >>> 16) & 0xff}.${(value >>> 8) & 0xff}.${value & 0xff}`;
}

/** The low 32 bits of an IPv6 value as an IPv4 value (what IPv4-mapped and NAT64 carry). */
function low32(value: bigint): number {
  return Number(value & 0xffffffffn);
}

/** RFC 5952 text form: lowercase, no leading zeros, longest run of zero groups as "::". */
function formatV6(value: bigint): string {
  const groups: number[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(Number((value >> shift) & 0xffffn));
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(':');
  const head = hex.slice(0, bestStart).join(':');
  const tail = hex.slice(bestStart + bestLen).join(':');
  return `${head}::${tail}`;
}

/** Strips brackets and an IPv6 zone id (`%eth0`, or `%25eth0` as written in URLs). */
function stripDecorations(input: string): string {
  let s = input.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone !== -1 && s.includes(':')) s = s.slice(0, zone);
  return s.toLowerCase();
}

type ParsedIp = { family: 4; value: number } | { family: 6; value: bigint };

function parseIp(input: string): ParsedIp | null {
  const s = stripDecorations(input);
  const family = isIP(s);
  if (family === 4) return { family: 4, value: v4Value(s) };
  if (family === 6) return { family: 6, value: bytesToBigInt(v6Bytes(s)) };
  return null;
}

/**
 * Canonical text of a literal IP address (brackets and zone id dropped, IPv6 in RFC 5952 form),
 * or null when `ip` is not a literal IPv4 or IPv6 address.
 */
export function canonicalIp(ip: string): string | null {
  const parsed = parseIp(ip);
  if (!parsed) return null;
  return parsed.family === 4 ? formatV4(parsed.value) : formatV6(parsed.value);
}

/** The embedded IPv4 address of an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), else the input. */
export function unmapIp(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) return ip;
  if (parsed.family === 6 && parsed.value >> 32n === 0xffffn) {
    return formatV4(low32(parsed.value));
  }
  return parsed.family === 4 ? formatV4(parsed.value) : formatV6(parsed.value);
}

// ---------------------------------------------------------------------------------------------
// The registries.

function range4(cidr: string, category: string): Range4 {
  const slash = cidr.indexOf('/');
  const parsed = parseIp(cidr.slice(0, slash));
  const len = Number(cidr.slice(slash + 1));
  if (parsed?.family !== 4 || !(len >= 0 && len <= 32)) throw new Error(`bad range ${cidr}`);
  // `<<` takes its count modulo 32: a /0 has no mask bits at all.
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return { net: (parsed.value & mask) >>> 0, mask, len, category };
}

function range6(cidr: string, category: string, embedded?: Embedded): Range6 {
  const slash = cidr.indexOf('/');
  const parsed = parseIp(cidr.slice(0, slash));
  const len = Number(cidr.slice(slash + 1));
  if (parsed?.family !== 6 || !(len >= 0 && len <= 128)) throw new Error(`bad range ${cidr}`);
  const shift = BigInt(128 - len);
  const prefix = parsed.value >> shift;
  return embedded === undefined
    ? { prefix, shift, len, category }
    : { prefix, shift, len, category, embedded };
}

/**
 * IANA IPv4 Special-Purpose Address Registry. Entries the registry marks globally reachable
 * (192.31.196.0/24 AS112, 192.52.193.0/24 AMT, 192.175.48.0/24 AS112 direct delegation) are
 * ordinary public space here; 192.0.0.0/24 is refused as a whole, including its two anycast /32s.
 */
const V4_RANGES: readonly Range4[] = [
  range4('0.0.0.0/32', 'unspecified'),
  range4('0.0.0.0/8', 'this-network'),
  range4('10.0.0.0/8', 'private'),
  range4('100.100.100.200/32', 'cloud-metadata'), // Alibaba Cloud metadata (inside CGNAT)
  range4('100.64.0.0/10', 'carrier-grade-nat'),
  range4('127.0.0.0/8', 'loopback'),
  range4('168.63.129.16/32', 'cloud-metadata'), // Azure host endpoint (WireServer), public space
  range4('169.254.169.254/32', 'cloud-metadata'), // AWS, GCP, Azure IMDS, OpenStack, ...
  range4('169.254.0.0/16', 'link-local'),
  range4('172.16.0.0/12', 'private'),
  range4('192.0.0.192/32', 'cloud-metadata'), // Oracle Cloud metadata (inside 192.0.0.0/24)
  range4('192.0.0.0/24', 'ietf-protocol'),
  range4('192.0.2.0/24', 'documentation'),
  range4('192.88.99.0/24', '6to4-relay'),
  range4('192.168.0.0/16', 'private'),
  range4('198.18.0.0/15', 'benchmarking'),
  range4('198.51.100.0/24', 'documentation'),
  range4('203.0.113.0/24', 'documentation'),
  range4('224.0.0.0/4', 'multicast'),
  range4('255.255.255.255/32', 'broadcast'),
  range4('240.0.0.0/4', 'reserved'),
];

/**
 * IANA IPv6 Special-Purpose Address Registry (2001::/23 refused as a whole, as are the
 * deprecated site-local fec0::/10 and the ULA block). Addresses outside 2000::/3, the only
 * block IANA allocates for global unicast, are `reserved` unless listed here.
 */
const V6_RANGES: readonly Range6[] = [
  range6('::/128', 'unspecified'),
  range6('::1/128', 'loopback'),
  range6('::ffff:0:0/96', 'ipv4-mapped', 'low32'),
  range6('::/96', 'ipv4-compatible'),
  range6('64:ff9b::/96', 'nat64', 'low32'),
  range6('64:ff9b:1::/48', 'nat64-local'),
  range6('100::/64', 'discard'),
  range6('100:0:0:1::/64', 'dummy'),
  range6('2001::/32', 'teredo'),
  range6('2001:2::/48', 'benchmarking'),
  range6('2001::/23', 'ietf-protocol'),
  range6('2001:db8::/32', 'documentation'),
  range6('2002::/16', '6to4', '6to4'),
  range6('3fff::/20', 'documentation'),
  range6('5f00::/16', 'srv6'),
  range6('fd00:ec2::254/128', 'cloud-metadata'), // AWS IMDS over IPv6 (inside ULA)
  range6('fc00::/7', 'unique-local'),
  range6('fe80::/10', 'link-local'),
  range6('fec0::/10', 'site-local'),
  range6('ff00::/8', 'multicast'),
];

// Most specific prefix first, so that a /32 inside a /16 wins.
const SORTED_V4 = [...V4_RANGES].sort((a, b) => b.len - a.len);
const SORTED_V6 = [...V6_RANGES].sort((a, b) => b.len - a.len);
const GLOBAL_UNICAST = range6('2000::/3', 'global-unicast');

function contains4(r: Range4, value: number): boolean {
  return (value & r.mask) >>> 0 === r.net;
}

function contains6(r: Range6, value: bigint): boolean {
  return value >> r.shift === r.prefix;
}

/** The IPv4 value a range with an embedded address carries. */
function embeddedValue(r: Range6, value: bigint): number | null {
  if (r.embedded === 'low32') return low32(value);
  if (r.embedded === '6to4') return low32(value >> 80n);
  return null;
}

function classifyV4(value: number): AddressClass {
  for (const r of SORTED_V4) {
    if (contains4(r, value)) return { allowed: false, category: r.category };
  }
  return PUBLIC;
}

function classifyV6(value: bigint): AddressClass {
  for (const r of SORTED_V6) {
    if (!contains6(r, value)) continue;
    const embedded = embeddedValue(r, value);
    if (embedded !== null) return classifyV4(embedded);
    return { allowed: false, category: r.category };
  }
  if (!contains6(GLOBAL_UNICAST, value)) return { allowed: false, category: 'reserved' };
  return PUBLIC;
}

/**
 * The IPv4 address an IPv6 address carries, as the classifier reads it (IPv4-mapped
 * `::ffff:0:0/96`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`); null for anything else.
 */
export function embeddedIpv4(ip: string): string | null {
  const parsed = parseIp(ip);
  if (parsed?.family !== 6) return null;
  for (const r of SORTED_V6) {
    if (!contains6(r, parsed.value)) continue;
    const embedded = embeddedValue(r, parsed.value);
    return embedded === null ? null : formatV4(embedded);
  }
  return null;
}

/**
 * Whether a socket may connect to this literal address. Accepts IPv4 or IPv6 text, optionally
 * bracketed, with an IPv6 zone id, in any case. IPv6 forms that carry an IPv4 address
 * (IPv4-mapped, NAT64 well-known prefix, 6to4) are classified by that IPv4 address, so the
 * category then names the IPv4 range (`::ffff:127.0.0.1` is `loopback`). Not an address:
 * `{ allowed: false, category: 'invalid' }`.
 */
export function classifyAddress(ip: string): AddressClass {
  const parsed = parseIp(ip);
  if (!parsed) return { allowed: false, category: 'invalid' };
  return parsed.family === 4 ? classifyV4(parsed.value) : classifyV6(parsed.value);
}

// ---------------------------------------------------------------------------------------------
// URL host literals.

/**
 * One part of a WHATWG IPv4 address: decimal, 0x-hex or 0-octal. null when not a number. A
 * number too large for any part (over 2^32 - 1) may come back rounded, or as Infinity: only
 * its being too large counts.
 */
function parseV4Number(part: string): number | null {
  let radix = 10;
  let digits = part;
  if (part.length >= 2 && part[0] === '0' && (part[1] === 'x' || part[1] === 'X')) {
    radix = 16;
    digits = part.slice(2);
  } else if (part.length >= 2 && part[0] === '0') {
    radix = 8;
    digits = part.slice(1);
  }
  if (digits === '') return 0;
  let value = 0;
  // Every digit is checked, however large the value already is: a part that is not a number
  // makes the host a name, not an invalid address.
  for (let i = 0; i < digits.length; i++) {
    const d = hexValue(digits.charCodeAt(i));
    if (d < 0 || d >= radix) return null;
    value = value * radix + d;
  }
  return value;
}

/** The WHATWG URL IPv4 parser: 1 to 4 parts, the last one filling the remaining bytes. */
function parseLooseV4(host: string): number | null {
  const parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0 || parts.length > 4) return null;
  const values: number[] = [];
  for (const part of parts) {
    if (part === '') return null;
    const n = parseV4Number(part);
    if (n === null) return null;
    values.push(n);
  }
  const last = values.length - 1;
  let result = 0;
  for (let i = 0; i < last; i++) {
    const v = values[i] as number;
    if (v > 255) return null;
    result += v * 2 ** (8 * (3 - i));
  }
  const tail = values[last] as number;
  if (tail >= 2 ** (8 * (4 - last))) return null;
  return result + tail;
}

function isPlainAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7f || c === 37 /* % */) return false;
  }
  return true;
}

/** Full-width and ideographic dots and digits fold to ASCII (UTS 46 mapping, as browsers do). */
function foldUnicode(host: string): string {
  // Plain ASCII without escapes is its own NFKC form: nothing to fold.
  if (isPlainAscii(host)) return host;
  let s = host;
  if (s.includes('%')) {
    try {
      s = decodeURIComponent(s);
    } catch {
      return host;
    }
  }
  s = s.normalize('NFKC');
  return s.replaceAll('\u3002', '.').replaceAll('\uff0e', '.').replaceAll('\uff61', '.');
}

/**
 * The canonical IP address a URL host denotes, or null when the host is a name. Understands every
 * literal form a browser accepts: dotted decimal, one 32-bit integer (`2130706433`), hex
 * (`0x7f000001`, `0x7f.0.0.1`), octal (`0177.0.0.1`, `017700000001`), short forms (`127.1`,
 * `127.0.1`), mixtures of these, a trailing dot, percent-encoded or full-width digits, and
 * IPv6 with or without brackets (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`, zone ids dropped).
 * IPv4 comes back dotted decimal; IPv6 in RFC 5952 form without brackets.
 */
export function parseHostLiteral(host: string): string | null {
  const raw = host.trim();
  if (raw === '') return null;
  if (raw.startsWith('[') || raw.includes(':')) {
    if (raw.startsWith('[') !== raw.endsWith(']')) return null;
    const inner = raw.startsWith('[') ? raw.slice(1, -1) : raw;
    let body = inner;
    const zone = body.indexOf('%');
    if (zone !== -1) body = body.slice(0, zone);
    if (isIP(body) !== 6) return null;
    return formatV6(bytesToBigInt(v6Bytes(body.toLowerCase())));
  }
  const folded = foldUnicode(raw).toLowerCase();
  const value = parseLooseV4(folded);
  return value === null ? null : formatV4(value);
}

/**
 * Whether `host` is a syntactically valid DNS name to look up: ASCII letters, digits, '-', '_'
 * and dots, labels of 1 to 63 characters, at most 253 in all, and (as in the WHATWG URL
 * parser) a last label that is not a number, since such a host is a malformed IPv4 literal.
 */
export function isValidHostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) return false;
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      const ok =
        (c >= 97 && c <= 122) ||
        (c >= 65 && c <= 90) ||
        (c >= 48 && c <= 57) ||
        c === 45 /* - */ ||
        c === 95; /* _ */
      if (!ok) return false;
    }
  }
  const last = labels[labels.length - 1] ?? '';
  return parseV4Number(last) === null;
}
