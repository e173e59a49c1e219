/**
 * No browser, no 500 (docs/security.md), through the HTTP surface: while Chromium has
 * crashed or cannot start, captures answer 503 `overloaded` with Retry-After and spend no
 * quota, /readyz says not ready, the log carries Chromium's exit and its last stderr lines,
 * and the service recovers by itself, without a restart.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { newApiKey } from '../helpers/accounts.ts';
import { startApp, type TestApp } from '../helpers/app.ts';
import { longDataDir, removeDataDir } from '../helpers/data-dir.ts';
import { type FixtureSite, page, startSite } from '../helpers/fixtures.ts';
import { browserPid, chromiumFailingUntil } from './helpers.ts';

/** Recovery bound: relaunch backoff tops out at 10 s; a busy machine launches slowly. */
const RECOVERY_MS = 60_000;

async function until<T>(what: string, probe: () => Promise<T | null>, ms = RECOVERY_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== null) return value;
    assert.ok(Date.now() < end, `${what}: not reached within ${ms} ms`);
    await sleep(100);
  }
}

function assertOverloaded(res: Response, body: { error?: string; code?: string }): void {
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.code, 'overloaded');
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${retryAfter}`);
}

describe('browser failures over HTTP', () => {
  let site: FixtureSite;
  const held = new Set<ServerResponse>();

  before(async () => {
    site = await startSite({
      '/ok': page('<p>ok</p>'),
      // Never answers: a capture of it is in flight until its deadline.
      '/held': (_req, res) => {
        held.add(res);
        res.on('close', () => held.delete(res));
      },
    });
  });
  after(async () => {
    for (const res of held) res.destroy();
    await site?.close();
  });

  let captures = 0;
  /** A new account's key (accounts.ts), as the two calls the tests make with it. */
  async function newCaller(t: TestApp) {
    const key = await newApiKey(t);
    const capture = (path: string) =>
      t.fetch('/v1/screenshots', {
        method: 'POST',
        // A new URL each time: never a cached answer.
        json: { url: `${site.origin}${path}?n=${++captures}` },
        headers: { 'x-api-key': key },
      });
    const used = async () =>
      (
        (await (await t.fetch('/v1/usage', { headers: { 'x-api-key': key } })).json()) as {
          used: number;
        }
      ).used;
    return { capture, used };
  }

  /** Captures /ok until one succeeds; every failure on the way must be a proper 503. */
  async function captureUntilOk(capture: (path: string) => Promise<Response>) {
    return until('a successful capture', async () => {
      const res = await capture('/ok');
      const body = (await res.json()) as { error?: string; code?: string };
      if (res.status === 201) return body;
      assertOverloaded(res, body);
      return null;
    });
  }

  const readyz = async (t: TestApp) => {
    const res = await t.fetch('/readyz');
    await res.body?.cancel();
    return res.status;
  };

  describe('Chromium killed', () => {
    let t: TestApp;
    before(async () => {
      t = await startApp({
        db: 'sqlite',
        env: {
          EGRESS_ALLOWLIST: site.hostPort,
          RENDER_CONCURRENCY: '1',
          RENDER_TIMEOUT_MS: '30000',
        },
      });
    });
    after(async () => {
      await t?.close();
    });

    it('SIGKILL mid-capture: that capture is 503 with Retry-After, no quota; the next succeeds', async () => {
      const { capture, used } = await newCaller(t);
      await captureUntilOk(capture);
      assert.equal(await used(), 1);
      const pid = browserPid(t.dataDir);
      const pending = capture('/held');
      await until('the capture reaches the page', async () => (held.size > 0 ? true : null));
      process.kill(pid, 'SIGKILL');
      const res = await pending;
      assertOverloaded(res, (await res.json()) as { code?: string });
      assert.equal(await used(), 1, 'no quota spent on the failed capture');
      await captureUntilOk(capture);
      assert.equal(await used(), 2);
      assert.notEqual(browserPid(t.dataDir), pid, 'a new browser, same service');
      assert.equal(await readyz(t), 200);
      const crash = t.logs.find((line) => line.includes('chromium disconnected'));
      assert.ok(crash, 'the crash is logged');
      assert.match(crash, /"signal":"SIGKILL"/);
      assert.match(crash, /"stderr":\[/);
    });

    it('SIGKILL while idle: readyz goes back to 200 and captures succeed', async () => {
      const { capture } = await newCaller(t);
      await captureUntilOk(capture);
      await until('ready', async () => ((await readyz(t)) === 200 ? true : null));
      const pid = browserPid(t.dataDir);
      const crashesBefore = t.logs.filter((l) => l.includes('chromium disconnected')).length;
      process.kill(pid, 'SIGKILL');
      await until('the crash is noticed', async () =>
        t.logs.filter((l) => l.includes('chromium disconnected')).length > crashesBefore
          ? true
          : null,
      );
      await until('ready again', async () => ((await readyz(t)) === 200 ? true : null));
      await captureUntilOk(capture);
      assert.notEqual(browserPid(t.dataDir), pid);
    });
  });

  it('no Chromium binary at all: captures are 503 with Retry-After, readyz 503', async () => {
    const dir = await longDataDir('no-chromium');
    const t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, CHROME_PATH: join(dir, 'missing-chromium') },
    });
    try {
      const { capture, used } = await newCaller(t);
      for (let i = 0; i < 2; i++) {
        const res = await capture('/ok');
        assertOverloaded(res, (await res.json()) as { code?: string });
      }
      assert.equal(await used(), 0, 'no quota spent');
      assert.equal(await readyz(t), 503);
      assert.ok(t.logs.some((line) => line.includes('could not start the renderer')));
    } finally {
      await t.close();
      await removeDataDir(dir);
    }
  });

  it('a Chromium that cannot start: 503s, readyz 503, its stderr in the log; then recovery', async () => {
    const dir = await longDataDir('fake-chromium');
    const flag = join(dir, 'works');
    // Exits at once with a message, until the flag file exists; then it is the real thing.
    const script = chromiumFailingUntil(dir, flag, 'fake-chromium: refusing to start on purpose');
    const t = await startApp({
      db: 'sqlite',
      env: { EGRESS_ALLOWLIST: site.hostPort, RENDER_CONCURRENCY: '1', CHROME_PATH: script },
    });
    try {
      const { capture, used } = await newCaller(t);
      for (let i = 0; i < 3; i++) {
        const res = await capture('/ok');
        assertOverloaded(res, (await res.json()) as { code?: string });
      }
      assert.equal(await used(), 0, 'no quota spent');
      assert.equal(await readyz(t), 503);
      const failure = t.logs.find((line) => line.includes('chromium could not be started'));
      assert.ok(failure, 'the failed launch is logged');
      assert.match(failure, /fake-chromium: refusing to start on purpose/);
      assert.match(failure, /"exitCode":42/);
      // The service keeps retrying in the background: more failed attempts get logged.
      await until('a retry', async () =>
        t.logs.filter((l) => l.includes('chromium could not be started')).length >= 2 ? true : null,
      );
      assert.ok(
        t.logs.every((line) => !line.includes('"statusCode":500')),
        'no 500 answered',
      );

      writeFileSync(flag, '');
      await until('ready after the fix', async () => ((await readyz(t)) === 200 ? true : null));
      await captureUntilOk(capture);
      assert.equal(await used(), 1);
      assert.ok(t.logs.some((line) => line.includes('chromium recovered')));
    } finally {
      await t.close();
      await removeDataDir(dir);
    }
  });
});
