import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyPlanOverrides, DEFAULT_PLANS, PlansFileError } from './plans.ts';

test('the default table follows docs/plans-and-limits.md', () => {
  assert.equal(DEFAULT_PLANS.free.monthly_quota, 100);
  assert.equal(DEFAULT_PLANS.pro.monthly_quota, 5000);
  assert.equal(DEFAULT_PLANS.demo.daily_quota, 5);
  assert.equal(DEFAULT_PLANS.free.rate_per_minute, 5);
  assert.equal(DEFAULT_PLANS.pro.rate_per_minute, 60);
  // Fair share (docs/security.md): Free 1, Pro 4, the demo 1 per IP.
  assert.equal(DEFAULT_PLANS.free.concurrent_renders, 1);
  assert.equal(DEFAULT_PLANS.pro.concurrent_renders, 4);
  assert.equal(DEFAULT_PLANS.demo.concurrent_renders, 1);
  assert.deepEqual(DEFAULT_PLANS.free.formats, ['png', 'jpeg']);
  assert.equal(DEFAULT_PLANS.free.full_page, true);
  assert.equal(DEFAULT_PLANS.free.fresh, false);
  assert.equal(DEFAULT_PLANS.pro.max_device_scale_factor, 3);
  assert.equal(DEFAULT_PLANS.demo.retention_hours, 24);
  assert.equal(DEFAULT_PLANS.free.retention_hours, 168);
  assert.equal(DEFAULT_PLANS.pro.retention_hours, 720);
  assert.equal(DEFAULT_PLANS.pro.listable, true);
  assert.equal(DEFAULT_PLANS.free.listable, false);
});

test('overrides replace single fields and leave the defaults untouched', () => {
  const plans = applyPlanOverrides(DEFAULT_PLANS, { free: { full_page: false, max_width: 1280 } });
  assert.equal(plans.free.full_page, false);
  assert.equal(plans.free.max_width, 1280);
  assert.equal(plans.free.max_height, 1080);
  assert.equal(DEFAULT_PLANS.free.full_page, true);
});

test('every problem is reported at once', () => {
  assert.throws(
    () =>
      applyPlanOverrides(DEFAULT_PLANS, {
        gold: {},
        pro: { fresh: 'yes', max_device_scale_factor: 5, concurrent_renders: 0 },
      }),
    (err: unknown) => {
      assert.ok(err instanceof PlansFileError);
      assert.equal(err.problems.length, 4);
      assert.ok(err.problems.some((p) => p.startsWith('pro.concurrent_renders must be')));
      return true;
    },
  );
  assert.throws(() => applyPlanOverrides(DEFAULT_PLANS, []), PlansFileError);
  assert.throws(
    () => applyPlanOverrides(DEFAULT_PLANS, { free: { monthly_quota: null } }),
    PlansFileError,
  );
});

test('monitors are Pro: max_monitors and min_monitor_interval are plan data', () => {
  assert.equal(DEFAULT_PLANS.free.max_monitors, 0);
  assert.equal(DEFAULT_PLANS.pro.max_monitors, 20);
  assert.equal(DEFAULT_PLANS.pro.min_monitor_interval, 15);
  const plans = applyPlanOverrides(DEFAULT_PLANS, {
    pro: { max_monitors: 5, min_monitor_interval: 60 },
  });
  assert.equal(plans.pro.max_monitors, 5);
  assert.equal(plans.pro.min_monitor_interval, 60);
  assert.throws(
    () => applyPlanOverrides(DEFAULT_PLANS, { pro: { max_monitors: -1, min_monitor_interval: 0 } }),
    (err: unknown) => {
      assert.ok(err instanceof PlansFileError);
      assert.equal(err.problems.length, 2);
      return true;
    },
  );
});
