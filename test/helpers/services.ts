import { connect } from 'node:net';

/** Local service addresses for integration tests (the machine's own PostgreSQL and Redis). */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const REQUIRE_SERVICES = process.env.REQUIRE_SERVICES === '1';

const reachable = (url: string): Promise<boolean> =>
  new Promise((resolve) => {
    const u = new URL(url);
    const socket = connect({ host: u.hostname, port: Number(u.port) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });

/**
 * Whether a service-backed suite runs. Without REQUIRE_SERVICES an unreachable service
 * skips with a visible reason; with it (CI), the suite runs and fails loudly.
 */
export async function serviceSkip(name: 'postgres' | 'redis'): Promise<string | false> {
  const url = name === 'postgres' ? TEST_DATABASE_URL : TEST_REDIS_URL;
  if (REQUIRE_SERVICES || (await reachable(url))) return false;
  const reason = `${name} is not reachable at ${url}; set REQUIRE_SERVICES=1 to fail instead`;
  process.stderr.write(`NOTICE: skipping ${name} tests: ${reason}\n`);
  return reason;
}
