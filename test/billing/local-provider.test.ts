import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DAY_MS, monthBounds } from '../../src/lib/time.ts';
import { createKey, describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';
import { logIn, manualClock, recordedEvents, startCheckout, subscription } from './helpers.ts';

const START = Date.UTC(2026, 0, 15, 12, 0, 0);
const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** POSTs like a browser form (or as told) without following the redirect. */
const post = (url: string, init: RequestInit = {}) =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: form, body: '', ...init });

async function capture(t: TestApp, key: string, format: string) {
  const res = await t.fetch('/v1/screenshots', {
    method: 'POST',
    headers: { 'x-api-key': key },
    json: { url: 'http://10.0.0.1/', format },
  });
  return { status: res.status, body: (await res.json()) as { code?: string } };
}

async function usage(t: TestApp, key: string) {
  const res = await t.fetch('/v1/usage', { headers: { 'x-api-key': key } });
  assert.equal(res.status, 200);
  return (await res.json()) as { plan: string; used: number; limit: number };
}

describeEachDatabase('billing with the local provider', (db) => {
  let t: TestApp;
  const clock = manualClock(START);
  before(async () => {
    t = await startApp({ db, clock: clock.now });
  });
  after(() => t.close());

  it('checkout, pay, Pro at once with keys kept; cancel at period end; Free after it', async () => {
    const account = await signUp(t);
    let cookie = account.cookie;
    const { key } = await createKey(t, cookie);
    // Usage already spent this month stays spent across the plan change.
    const period = monthBounds(clock.now()).key;
    for (let i = 0; i < 3; i++)
      await t.deps.ctx.store.quota.reserve({ userId: account.id, period }, { limit: 100 });
    assert.equal((await capture(t, key, 'webp')).body.code, 'plan_restriction');
    assert.deepEqual(await subscription(t, cookie), {
      plan: 'free',
      status: 'none',
      renews_at: null,
      cancel_at_period_end: false,
    });

    const url = await startCheckout(t, cookie);
    assert.ok(url.startsWith(`${t.url}/billing/local/checkout/cs_local_`), url);
    const page = await fetch(url);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    const html = await page.text();
    assert.match(html, /Pro/);
    assert.match(html, /\$9\.00 per month/);
    assert.match(html, />Pay</);
    assert.match(html, />Cancel</);

    const paid = await post(`${url}/complete`);
    assert.equal(paid.status, 303);
    assert.equal(paid.headers.get('location'), `${t.url}/dashboard?billing=success`);

    // The very next request sees Pro, with the same key.
    const sub = await subscription(t, cookie);
    assert.equal(sub.plan, 'pro');
    assert.equal(sub.status, 'active');
    assert.equal(sub.cancel_at_period_end, false);
    const renewsAt = Date.parse(sub.renews_at ?? '');
    assert.ok(
      renewsAt >= START + 28 * DAY_MS && renewsAt <= START + 31 * DAY_MS,
      sub.renews_at ?? '',
    );
    const refused = await capture(t, key, 'webp');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'url_not_allowed', 'webp passes the plan check now');
    const after = await usage(t, key);
    assert.deepEqual([after.plan, after.used, after.limit], ['pro', 3, 5000]);
    const events = await recordedEvents(t, account.id);
    assert.equal(events.length, 3, 'subscription created, invoice paid, checkout completed');

    // Paying twice (a double click, a retried POST) changes nothing more.
    const again = await post(`${url}/complete`);
    assert.equal(again.status, 303);
    assert.equal((await recordedEvents(t, account.id)).length, 3);
    assert.equal((await t.fetch('/v1/billing/checkout', { method: 'POST', cookie })).status, 409);

    // Cancel at period end in the portal: still Pro until renews_at.
    const portalRes = await t.fetch('/v1/billing/portal', { method: 'POST', cookie });
    assert.equal(portalRes.status, 200);
    const portal = ((await portalRes.json()) as { url: string }).url;
    assert.ok(portal.startsWith(`${t.url}/billing/local/portal/bps_local_`), portal);
    assert.match(await (await fetch(portal)).text(), /Cancel at period end/);
    const cancelled = await post(`${portal}/cancel`);
    assert.equal(cancelled.status, 303);
    assert.match(await (await fetch(portal)).text(), /Resume/);
    const ending = await subscription(t, cookie);
    assert.equal(ending.plan, 'pro');
    assert.equal(ending.status, 'active');
    assert.equal(ending.cancel_at_period_end, true);
    assert.equal(ending.renews_at, sub.renews_at);

    // A day before the end nothing happens; once the end passes, back to Free.
    clock.advance(renewsAt - clock.now() - DAY_MS);
    assert.equal(await t.deps.billing.settle(), 0);
    cookie = await logIn(t, account.email);
    assert.equal((await subscription(t, cookie)).plan, 'pro');
    clock.advance(DAY_MS + 1000);
    assert.equal(await t.deps.billing.settle(), 1);
    assert.deepEqual(await subscription(t, cookie), {
      plan: 'free',
      status: 'canceled',
      renews_at: null,
      cancel_at_period_end: false,
    });
    assert.equal((await capture(t, key, 'webp')).body.code, 'plan_restriction');
    assert.equal((await usage(t, key)).limit, 100);
    assert.equal(await t.deps.billing.settle(), 0, 'a canceled subscription is settled once');

    // Buying again after it ended works.
    const second = await startCheckout(t, cookie);
    assert.equal((await post(`${second}/complete`)).status, 303);
    assert.equal((await subscription(t, cookie)).plan, 'pro');
  });

  it('resuming keeps the renewal, and a passing period end renews', async () => {
    const account = await signUp(t);
    const url = await startCheckout(t, account.cookie);
    // JSON and empty bodies work as well as forms.
    const paid = await post(`${url}/complete`, {
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(paid.status, 303);
    const before = await subscription(t, account.cookie);
    const portal = (await (
      await t.fetch('/v1/billing/portal', { method: 'POST', cookie: account.cookie })
    ).json()) as { url: string };
    assert.equal((await post(`${portal.url}/cancel`, { headers: {}, body: null })).status, 303);
    assert.equal((await subscription(t, account.cookie)).cancel_at_period_end, true);
    assert.equal((await post(`${portal.url}/resume`, { body: 'x=1' })).status, 303);
    assert.equal((await subscription(t, account.cookie)).cancel_at_period_end, false);

    clock.advance(Date.parse(before.renews_at ?? '') - clock.now() + 1000);
    assert.ok((await t.deps.billing.settle()) >= 1);
    const cookie = await logIn(t, account.email);
    const renewed = await subscription(t, cookie);
    assert.equal(renewed.plan, 'pro');
    assert.equal(renewed.status, 'active');
    const next = Date.parse(renewed.renews_at ?? '');
    const prev = Date.parse(before.renews_at ?? '');
    assert.ok(next >= prev + 28 * DAY_MS && next <= prev + 31 * DAY_MS, renewed.renews_at ?? '');
  });

  it('visiting the checkout page without paying changes nothing; abandoning is final', async () => {
    const account = await signUp(t);
    const url = await startCheckout(t, account.cookie);
    for (let i = 0; i < 2; i++) assert.equal((await fetch(url)).status, 200);
    assert.deepEqual(await subscription(t, account.cookie), {
      plan: 'free',
      status: 'none',
      renews_at: null,
      cancel_at_period_end: false,
    });
    assert.deepEqual(await recordedEvents(t, account.id), []);

    const abandoned = await post(`${url}/cancel`);
    assert.equal(abandoned.status, 303);
    assert.equal(abandoned.headers.get('location'), `${t.url}/dashboard?billing=cancel`);
    const late = await post(`${url}/complete`);
    assert.equal(late.status, 409);
    assert.equal((await subscription(t, account.cookie)).plan, 'free');
    assert.match(await (await fetch(url)).text(), /abandoned/);
    assert.deepEqual(await recordedEvents(t, account.id), []);
  });

  it('checkout ids are capabilities: unknown ids are 404, other bodies 400', async () => {
    const account = await signUp(t);
    const url = await startCheckout(t, account.cookie);
    const unknown = `${t.url}/billing/local/checkout/cs_local_${'A'.repeat(43)}`;
    assert.equal((await fetch(unknown)).status, 404);
    assert.equal((await post(`${unknown}/complete`)).status, 404);
    assert.equal((await post(`${t.url}/billing/local/checkout/nonsense/complete`)).status, 404);
    assert.equal((await post(`${t.url}/billing/local/portal/nonsense/cancel`)).status, 404);
    const text = await post(`${url}/complete`, {
      headers: { 'content-type': 'text/plain' },
      body: 'pay',
    });
    assert.equal(text.status, 400);
    // Forms are accepted on these pages only.
    const formElsewhere = await t.fetch('/v1/billing/checkout', {
      method: 'POST',
      cookie: account.cookie,
      headers: form,
      body: 'a=1',
    });
    assert.equal(formElsewhere.status, 400);
    assert.equal((await subscription(t, account.cookie)).plan, 'free');
  });

  it('two open checkouts: the second payment is refused', async () => {
    const account = await signUp(t);
    const first = await startCheckout(t, account.cookie);
    const second = await startCheckout(t, account.cookie);
    assert.equal((await post(`${first}/complete`)).status, 303);
    assert.equal((await post(`${second}/complete`)).status, 409);
    assert.equal((await recordedEvents(t, account.id)).length, 3);
  });

  it('session only: no cookie 401, an API key 401, cross-site 403, no portal before a checkout', async () => {
    const account = await signUp(t);
    const { key } = await createKey(t, account.cookie);
    assert.equal((await t.fetch('/v1/billing/subscription')).status, 401);
    assert.equal((await t.fetch('/v1/billing/checkout', { method: 'POST' })).status, 401);
    const withKey = await t.fetch('/v1/billing/subscription', { headers: { 'x-api-key': key } });
    assert.equal(withKey.status, 401);
    assert.deepEqual(await withKey.json(), { error: 'unauthorized' });
    for (const path of ['/v1/billing/checkout', '/v1/billing/portal']) {
      const crossSite = await t.fetch(path, {
        method: 'POST',
        cookie: account.cookie,
        headers: { origin: 'https://evil.example' },
      });
      assert.equal(crossSite.status, 403, path);
    }
    const bad = await t.fetch('/v1/billing/checkout', {
      method: 'POST',
      cookie: account.cookie,
      json: { plan: 'pro' },
    });
    assert.equal(bad.status, 400);
    assert.equal(
      (await t.fetch('/v1/billing/portal', { method: 'POST', cookie: account.cookie })).status,
      409,
    );
    const sameSite = await t.fetch('/v1/billing/checkout', {
      method: 'POST',
      cookie: account.cookie,
      headers: { origin: t.url },
      json: {},
    });
    assert.equal(sameSite.status, 200);
  });

  it('the webhook endpoint refuses events not signed by the local provider', async () => {
    const account = await signUp(t);
    const payload = JSON.stringify({
      id: 'evt_forged',
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(clock.now() / 1000),
      data: {
        object: {
          mode: 'subscription',
          payment_status: 'paid',
          client_reference_id: String(account.id),
          customer: 'cus_x',
          subscription: 'sub_x',
        },
      },
    });
    const res = await t.fetch('/v1/billing/webhook', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'stripe-signature': `t=${Math.floor(clock.now() / 1000)},v1=${'a'.repeat(64)}`,
      },
      body: payload,
    });
    assert.equal(res.status, 400);
    assert.equal((await subscription(t, account.cookie)).plan, 'free');
  });
});

describe('billing redirects go to the dashboard origin', () => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      db: 'sqlite',
      env: { DASHBOARD_ORIGINS: 'http://127.0.0.1:5999,http://localhost:5999' },
    });
  });
  after(() => t.close());

  it('uses the first DASHBOARD_ORIGINS entry', async () => {
    const { cookie } = await signUp(t);
    const url = await startCheckout(t, cookie);
    const cancel = await post(`${url}/cancel`);
    assert.equal(cancel.headers.get('location'), 'http://127.0.0.1:5999/dashboard?billing=cancel');
    const page = await fetch(url);
    assert.match(
      page.headers.get('content-security-policy') ?? '',
      /form-action 'self' http:\/\/127\.0\.0\.1:5999/,
    );
  });
});
