import { isIPv6 } from 'node:net';

/**
 * The client an IP-counted limit belongs to (the demo's allowances, fair share and DNS bounds,
 * the login throttle): the IPv4 address, or the /64 of an IPv6 one (a single subscriber
 * usually holds a whole /64, so per-address counting would be no limit).
 */
export function clientIpKey(ip: string): string {
  const bare = ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
  if (!isIPv6(bare)) return bare;
  const [head = '', tail = ''] = bare.split('::');
  const headParts = head ? head.split(':') : [];
  const tailParts = tail ? tail.split(':') : [];
  const groups = bare.includes('::')
    ? [...headParts, ...Array(8 - headParts.length - tailParts.length).fill('0'), ...tailParts]
    : headParts;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}
