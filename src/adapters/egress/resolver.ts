/**
 * Name resolution for the egress checks: a port, so tests can make names slow, dead or point
 * anywhere without any real DNS, and the production implementation on Node's resolvers.
 */
import { Resolver as CaresResolver, lookup } from 'node:dns/promises';

export interface DnsAnswer {
  /** A and AAAA addresses, IPv4 first. */
  addresses: string[];
  /** The answer's TTL in seconds; undefined when the source gives none (/etc/hosts). */
  ttlSeconds?: number;
}

export interface Resolver {
  /**
   * Every address of a name. Rejects when the name does not resolve (NXDOMAIN, no address
   * records, SERVFAIL, no answer in time). The caller bounds the wait; an implementation should
   * also end its own work in about that time.
   */
  resolve(name: string): Promise<DnsAnswer>;
}

/**
 * c-ares gives up on a query after CARES_TRIES tries, the timeout doubling each time
 * (1.5 s + 3 s): within the 5 s a lookup may wait (BOUNDS.dns.timeoutMs).
 */
const CARES_TIMEOUT_MS = 1_500;
const CARES_TRIES = 2;
/** getaddrinfo lookups (the fallback) holding one of libuv's four pool threads at once. */
const FALLBACK_MAX_IN_FLIGHT = 2;
const FALLBACK_TIMEOUT_MS = 5_000;

/** Answers c-ares gives when the name has no address: worth asking /etc/hosts. */
const NO_SUCH_NAME = new Set(['ENOTFOUND', 'ENODATA']);

function codeOf(err: unknown): string | undefined {
  return (err as { code?: unknown } | null)?.code as string | undefined;
}

/**
 * Production resolver. A and AAAA come from c-ares (`dns.promises.Resolver`): it reports TTLs
 * and runs on the event loop, so slow names never occupy libuv's thread pool (which disk
 * storage and password hashing share). c-ares reads neither /etc/hosts nor nsswitch, so when
 * it says a name has no address, getaddrinfo (`dns.lookup`) gets one try; those lookups do hold
 * a pool thread until they end, so at most FALLBACK_MAX_IN_FLIGHT run at once process-wide.
 */
export function systemResolver(): Resolver {
  const cares = new CaresResolver({ timeout: CARES_TIMEOUT_MS, tries: CARES_TRIES });
  const fallback = boundedLookup();
  return {
    async resolve(name) {
      const [v4, v6] = await Promise.allSettled([
        cares.resolve4(name, { ttl: true }),
        cares.resolve6(name, { ttl: true }),
      ]);
      const records = [
        ...(v4.status === 'fulfilled' ? v4.value : []),
        ...(v6.status === 'fulfilled' ? v6.value : []),
      ];
      if (records.length > 0) {
        return {
          addresses: records.map((r) => r.address),
          ttlSeconds: Math.min(...records.map((r) => r.ttl)),
        };
      }
      const failures = [v4, v6].map((r) =>
        r.status === 'rejected' ? codeOf(r.reason) : 'ENODATA',
      );
      if (failures.every((code) => code !== undefined && NO_SUCH_NAME.has(code))) {
        return { addresses: await fallback(name) };
      }
      throw v4.status === 'rejected' ? v4.reason : new Error(`no address for ${name}`);
    },
  };
}

/**
 * dns.lookup with at most FALLBACK_MAX_IN_FLIGHT in flight: a slot is freed when the lookup
 * really ends (the thread is busy until then), not when the caller stops waiting, and an
 * answer, queue wait included, must come within FALLBACK_TIMEOUT_MS.
 */
function boundedLookup(): (name: string) => Promise<string[]> {
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };
  return (name) =>
    new Promise<string[]>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        const queued = waiting.indexOf(start);
        if (queued !== -1) waiting.splice(queued, 1);
        reject(new Error(`no answer for ${name} within ${FALLBACK_TIMEOUT_MS} ms`));
      }, FALLBACK_TIMEOUT_MS);
      function start(): void {
        lookup(name, { all: true, order: 'ipv4first' }).then(
          (results) => {
            clearTimeout(timer);
            if (!settled) resolve(results.map((r) => r.address));
            settled = true;
            release();
          },
          (err: unknown) => {
            clearTimeout(timer);
            if (!settled) reject(err);
            settled = true;
            release();
          },
        );
      }
      if (inFlight < FALLBACK_MAX_IN_FLIGHT) {
        inFlight++;
        start();
      } else {
        waiting.push(start);
      }
    });
}
