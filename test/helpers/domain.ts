/**
 * The domain tier's app (`npm run test:domain`): the real app on SQLite, over real HTTP, with
 * the in-memory renderer (memory-renderer.ts) in place of Chromium. Its target origin is an
 * allowlisted loopback port held by a server that answers nothing: the guard passes it, and
 * nothing ever connects to it. Held, not just probed free: a port probed and let go may be
 * the one the app listens on next, and the service's own port is refused whatever the
 * allowlist says.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import type { CaptureAnswer } from '../../src/domain/captures/capture-answer.ts';
import { type QueryPair, signedQueryString } from '../../src/lib/signed-query.ts';
import type { Clock } from '../../src/lib/time.ts';
import { startApp, type TestApp } from './app.ts';
import { MemoryRenderer } from './memory-renderer.ts';

export interface DomainApp {
  t: TestApp;
  renderer: MemoryRenderer;
  /** `http://127.0.0.1:<port>`: allowlisted, held by a server nothing connects to. */
  origin: string;
  close(): Promise<void>;
}

export async function startDomainApp(
  options: {
    plans?: Record<string, Record<string, unknown>>;
    env?: Record<string, string>;
    clock?: Clock;
  } = {},
): Promise<DomainApp> {
  const { server, port } = await heldPort();
  const renderer = new MemoryRenderer();
  const plans = options.plans ?? {};
  const t = await startApp({
    db: 'sqlite',
    renderer,
    env: { EGRESS_ALLOWLIST: `127.0.0.1:${port}`, ...options.env },
    // The per-minute capture rate out of the way: these tests are about what captures cost.
    plans: {
      ...plans,
      free: { rate_per_minute: 1000, ...plans.free },
      pro: { rate_per_minute: 1000, ...plans.pro },
    },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  assert.equal(t.deps.renderer, renderer, 'the app renders in memory: no browser is started');
  const close = async () => {
    await t.close();
    await new Promise((resolve) => server.close(resolve));
  };
  return { t, renderer, origin: `http://127.0.0.1:${port}`, close };
}

/** A loopback port kept by a listening server until the app closes. */
async function heldPort(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { server, port: address.port };
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The JSON body (a 201's CaptureAnswer, or an error body). */
  body: CaptureAnswer & { error?: string; code?: string } & Record<string, unknown>;
}

/** POST /v1/screenshots with `key`: `body` on a small 320x200 viewport. */
export async function capture(
  t: TestApp,
  key: string,
  body: Record<string, unknown>,
): Promise<Answer> {
  const res = await t.fetch('/v1/screenshots', {
    method: 'POST',
    headers: { 'x-api-key': key },
    json: { width: 320, height: 200, ...body },
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Answer['body'] };
}

/**
 * The account's units this month and in its days' chart (the dashboard's usage, by session:
 * it still answers once the account's key is revoked).
 */
export async function usage(t: TestApp, cookie: string): Promise<{ used: number; days: number }> {
  const res = await t.fetch('/v1/account/usage', { cookie });
  assert.equal(res.status, 200);
  const u = (await res.json()) as { used: number; days: Array<{ count: number }> };
  return { used: u.used, days: u.days.reduce((sum, d) => sum + d.count, 0) };
}

/** The account's units held for captures in flight (rows of `quota_holds`). */
export async function heldUnits(t: TestApp, userId: number): Promise<number> {
  const rows = await t.deps.database.db
    .selectFrom('quota_holds')
    .select('id')
    .where('user_id', '=', userId)
    .execute();
  return rows.length;
}

/** GET of a signed render link for `key` (docs/api.md, "Signed render links"); no redirect followed. */
export function getLink(
  t: TestApp,
  key: { keyId: number; signingSecret: string },
  options: QueryPair[],
): Promise<Response> {
  const query = signedQueryString(key.signingSecret, [
    ['width', '320'],
    ['height', '200'],
    ...options,
    ['key_id', String(key.keyId)],
    ['expires', String(Math.floor(Date.now() / 1000) + 3600)],
  ]);
  return fetch(`${t.url}/v1/render?${query}`, { redirect: 'manual' });
}

/** Waits until `check` holds (every 10 ms, at most `ms`). */
export async function until(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
