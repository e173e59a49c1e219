/**
 * Quota holds and returns (docs/api.md, "Order of checks": only a 201 costs quota, a failure
 * after the reserve gives the unit back, exact under concurrency; docs/plans-and-limits.md:
 * a render's unit is held until delivered), through the real app on SQLite with the
 * in-memory renderer. Async captures charge the same way (docs/api.md, "Async captures": a
 * queued job holds its unit, a failed one gives it back).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CaptureWarning } from '../../src/domain/captures/warnings.ts';
import { AppError } from '../../src/domain/errors.ts';
import { account } from '../helpers/accounts.ts';
import {
  capture,
  type DomainApp,
  heldUnits,
  startDomainApp,
  until,
  usage,
} from '../helpers/domain.ts';

const QUOTA = 3;

const nextMonth = (): string => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
};

describe('domain: quota holds and returns', () => {
  let d: DomainApp;
  before(async () => {
    d = await startDomainApp({ plans: { free: { monthly_quota: QUOTA } } });
  });
  after(() => d?.close());

  let n = 0;
  const fresh = () => `${d.origin}/quota-${++n}`;

  it('a render holds its unit while it runs and keeps it, once, when it delivers', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const held = d.renderer.hold(url);
    const pending = capture(d.t, a.key, { url });
    await held.reached;
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 }, 'counted while held');
    assert.equal(await heldUnits(d.t, a.id), 1, 'held in quota_holds');
    held.release();
    const res = await pending;
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(res.body.quota, { used: 1, limit: QUOTA });
    assert.equal(await heldUnits(d.t, a.id), 0, 'the hold ended: the unit is kept');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
    // A hit is charged too, and holds nothing.
    const hit = await capture(d.t, a.key, { url });
    assert.equal(hit.body.cached, true);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 2, days: 2 });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });

  it('a render that fails gives its held unit back', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    d.renderer.script(url, {
      fail: () =>
        new AppError(
          'target_error',
          'the page navigated away while it was being captured (a reload or redirect by the page itself)',
        ),
    });
    const held = d.renderer.hold(url);
    const pending = capture(d.t, a.key, { url });
    await held.reached;
    assert.equal(await heldUnits(d.t, a.id), 1);
    assert.equal((await usage(d.t, a.cookie)).used, 1);
    held.release();
    const res = await pending;
    assert.equal(res.status, 502);
    assert.equal(res.body.code, 'target_error');
    assert.match(String(res.body.error), /^the page navigated away/);
    assert.equal(await heldUnits(d.t, a.id), 0, 'the hold is gone');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 }, 'the unit is back');
    assert.equal(d.renderer.rendersOf(url), 1);
  });

  it('a target error page is a 201 that costs a unit; with fail_on_http_error a 502 that costs none', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    d.renderer.script(url, { status: 404 });
    const page = await capture(d.t, a.key, { url });
    assert.equal(page.status, 201);
    assert.equal(page.headers.get('x-target-status'), '404');
    const refused = await capture(d.t, a.key, { url, fail_on_http_error: true });
    assert.equal(refused.status, 502);
    assert.equal(refused.body.code, 'target_error');
    assert.equal(refused.body.error, 'the target answered HTTP 404 (fail_on_http_error is set)');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });

  it('a warning named by fail_on is a 422 that stores nothing and costs nothing', async () => {
    const a = await account(d.t, { key: true });
    const url = fresh();
    const warnings: CaptureWarning[] = [
      { code: 'not_at_rest', message: 'the page was still changing' },
    ];
    d.renderer.script(url, { warnings });
    const rejected = await capture(d.t, a.key, { url, fail_on: ['not_at_rest'] });
    assert.equal(rejected.status, 422);
    assert.equal(rejected.body.code, 'capture_rejected');
    assert.deepEqual(rejected.body.warnings, warnings);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    // Nothing was stored: the same request renders again (and is refused again).
    assert.equal((await capture(d.t, a.key, { url, fail_on: ['not_at_rest'] })).status, 422);
    assert.equal(d.renderer.rendersOf(url), 2);
    // Without fail_on the warning is answered with the image, and costs its unit.
    const kept = await capture(d.t, a.key, { url });
    assert.equal(kept.status, 201);
    assert.deepEqual(kept.body.warnings, warnings);
    assert.deepEqual(await usage(d.t, a.cookie), { used: 1, days: 1 });
  });

  it('with the month spent: 402 with the quota body, nothing rendered, a hit refused too', async () => {
    const a = await account(d.t, { key: true });
    const urls = [fresh(), fresh(), fresh()];
    for (const url of urls) assert.equal((await capture(d.t, a.key, { url })).status, 201);
    const before = d.renderer.renders;
    const url = fresh();
    const refused = await capture(d.t, a.key, { url });
    assert.equal(refused.status, 402);
    assert.deepEqual(Object.keys(refused.body).sort(), [
      'error',
      'limit',
      'plan',
      'resets_at',
      'used',
    ]);
    assert.deepEqual(refused.body, {
      error: 'monthly quota exceeded',
      plan: 'free',
      used: QUOTA,
      limit: QUOTA,
      resets_at: nextMonth(),
    });
    assert.ok(refused.headers.get('x-ratelimit-limit'), 'a 402 carries the rate headers');
    // A hit costs its unit like any request: with none left it is refused as well.
    const hit = await capture(d.t, a.key, { url: urls[0] });
    assert.equal(hit.status, 402);
    assert.equal(d.renderer.renders, before, 'nothing rendered');
    assert.deepEqual(await usage(d.t, a.cookie), { used: QUOTA, days: QUOTA });
  });

  it('is exact under concurrency: held units count, and a failed render frees its unit for the next', async () => {
    const a = await account(d.t, { key: true });
    assert.equal((await capture(d.t, a.key, { url: fresh() })).status, 201);
    const kept = fresh();
    const failing = fresh();
    d.renderer.script(failing, { fail: () => new AppError('target_error', 'the page crashed') });
    const holds = [d.renderer.hold(kept), d.renderer.hold(failing)];
    const pending = [capture(d.t, a.key, { url: kept }), capture(d.t, a.key, { url: failing })];
    await Promise.all(holds.map((h) => h.reached));
    assert.equal(await heldUnits(d.t, a.id), 2);
    // Two units held and one delivered: the month is spent while they run.
    const refused = await capture(d.t, a.key, { url: fresh() });
    assert.equal(refused.status, 402);
    assert.equal(refused.body.used, QUOTA);
    holds[1]?.release();
    assert.equal((await pending[1])?.status, 502);
    assert.equal(await heldUnits(d.t, a.id), 1);
    // The failed render's unit is back: the next capture gets it.
    const next = await capture(d.t, a.key, { url: fresh() });
    assert.equal(next.status, 201, JSON.stringify(next.body));
    assert.deepEqual(next.body.quota, { used: QUOTA, limit: QUOTA });
    holds[0]?.release();
    assert.equal((await pending[0])?.status, 201);
    assert.deepEqual(await usage(d.t, a.cookie), { used: QUOTA, days: QUOTA });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });

  it('async: a queued job holds its unit, a succeeded one keeps it, a failed one gives it back', async () => {
    const p = await account(d.t, { plan: 'pro', key: true });
    const ok = fresh();
    const failing = fresh();
    d.renderer.script(failing, { fail: () => new AppError('target_error', 'the page crashed') });
    const hold = d.renderer.hold(ok);
    const queue = async (url: string) => {
      const res = await d.t.fetch('/v1/screenshots', {
        method: 'POST',
        headers: { 'x-api-key': p.key },
        json: { url, width: 320, height: 200, async: true },
      });
      assert.equal(res.status, 202, await res.clone().text());
      return ((await res.json()) as { id: string }).id;
    };
    const status = async (id: string) => {
      const res = await d.t.fetch(`/v1/screenshots/${id}`, { headers: { 'x-api-key': p.key } });
      return (await res.json()) as { status: string; code?: string; cached?: boolean };
    };
    const okJob = await queue(ok);
    await hold.reached;
    assert.deepEqual(await usage(d.t, p.cookie), { used: 1, days: 1 }, 'held while rendering');
    assert.equal((await status(okJob)).status, 'rendering');
    hold.release();
    await until(async () => (await status(okJob)).status === 'succeeded');
    assert.equal((await status(okJob)).cached, false);
    assert.deepEqual(await usage(d.t, p.cookie), { used: 1, days: 1 });

    const failedJob = await queue(failing);
    await until(async () => (await status(failedJob)).status === 'failed');
    assert.equal((await status(failedJob)).code, 'target_error');
    assert.deepEqual(
      await usage(d.t, p.cookie),
      { used: 1, days: 1 },
      'the failed job paid nothing',
    );
    assert.equal(await heldUnits(d.t, p.id), 0);
  });
});

describe('domain: the render deadline', () => {
  let d: DomainApp;
  before(async () => {
    d = await startDomainApp({ env: { RENDER_TIMEOUT_MS: '1000' } });
  });
  after(() => d?.close());

  it('a render past its deadline is a 504 naming its phase, and costs nothing', async () => {
    const a = await account(d.t, { key: true });
    const hanging = `${d.origin}/hangs`;
    d.renderer.script(hanging, { hang: 'load' });
    const heldUrl = `${d.origin}/held`;
    const hold = d.renderer.hold(heldUrl);
    const started = Date.now();
    const [load, held] = await Promise.all([
      capture(d.t, a.key, { url: hanging }),
      capture(d.t, a.key, { url: heldUrl }),
    ]);
    const took = Date.now() - started;
    hold.release();
    assert.ok(took >= 900 && took < 5_000, `ended at the 1 s deadline (${took} ms)`);
    assert.equal(load.status, 504);
    assert.deepEqual(load.body, {
      error: 'render timed out while loading the page (phase: load)',
      code: 'render_timeout',
      phase: 'load',
      pending_requests: [],
    });
    assert.equal(held.status, 504);
    assert.equal(held.body.phase, 'navigation');
    assert.deepEqual(await usage(d.t, a.cookie), { used: 0, days: 0 });
    assert.equal(await heldUnits(d.t, a.id), 0);
  });
});
