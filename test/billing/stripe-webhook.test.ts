import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, it } from 'node:test';
import Stripe from 'stripe';
import { describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';
import { countEvents, failProUpgrades, subscription } from './helpers.ts';

const OLD_SECRET = 'whsec_test_old';
const NEW_SECRET = 'whsec_test_new';
const stripe = new Stripe('sk_test_webhooks');
const nowSeconds = () => Math.floor(Date.now() / 1000);
const DAY = 86_400;

interface Built {
  id: string;
  payload: string;
}

function event(type: string, object: object, created = nowSeconds()): Built {
  const id = `evt_test_${randomBytes(8).toString('hex')}`;
  return {
    id,
    payload: JSON.stringify({
      id,
      object: 'event',
      api_version: Stripe.API_VERSION,
      created,
      livemode: false,
      pending_webhooks: 1,
      type,
      data: { object },
    }),
  };
}

const checkoutCompleted = (accountId: number, customer: string, sub: string, created?: number) =>
  event(
    'checkout.session.completed',
    {
      id: `cs_test_${sub}`,
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      client_reference_id: String(accountId),
      customer,
      subscription: sub,
    },
    created,
  );

function subscriptionObject(
  customer: string,
  sub: string,
  fields: { status?: string; cancel_at_period_end?: boolean; period_end?: number } = {},
) {
  const end = fields.period_end ?? nowSeconds() + 30 * DAY;
  return {
    id: sub,
    object: 'subscription',
    customer,
    status: fields.status ?? 'active',
    cancel_at_period_end: fields.cancel_at_period_end ?? false,
    cancel_at: null,
    items: {
      object: 'list',
      data: [
        {
          id: `si_${sub}`,
          object: 'subscription_item',
          current_period_start: end - 30 * DAY,
          current_period_end: end,
        },
      ],
    },
    metadata: {},
  };
}

describeEachDatabase('Stripe webhooks', (db) => {
  let t: TestApp;
  before(async () => {
    t = await startApp({
      db,
      env: {
        STRIPE_SECRET_KEY: 'sk_test_webhooks',
        // Two secrets: a rotation in progress.
        STRIPE_WEBHOOK_SECRET: `${OLD_SECRET},${NEW_SECRET}`,
        STRIPE_PRICE_ID: 'price_test_pro',
        // Any API call would fail here, on this machine: these tests make none.
        STRIPE_API_BASE: 'http://127.0.0.1:9',
      },
    });
  });
  after(() => t.close());

  const deliver = (payload: string, signature: string | null) =>
    t.fetch('/v1/billing/webhook', {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        ...(signature === null ? {} : { 'stripe-signature': signature }),
      },
      body: payload,
    });

  const sign = (payload: string, options: { secret?: string; timestamp?: number } = {}) =>
    stripe.webhooks.generateTestHeaderString({
      payload,
      secret: options.secret ?? NEW_SECRET,
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    });

  async function send(built: Built, options?: { secret?: string; timestamp?: number }) {
    const res = await deliver(built.payload, sign(built.payload, options));
    return { status: res.status, body: (await res.json()) as { outcome?: string; error?: string } };
  }

  it('takes deliveries up to 512 KiB and names that bound in the 413 beyond it', async () => {
    const padded = JSON.stringify({ id: 'evt_big', type: 'ping', pad: 'x'.repeat(300 * 1024) });
    const ok = await deliver(padded, sign(padded));
    assert.notEqual(ok.status, 413);
    const huge = JSON.stringify({ id: 'evt_huge', type: 'ping', pad: 'x'.repeat(600 * 1024) });
    const res = await deliver(huge, sign(huge));
    assert.equal(res.status, 413);
    assert.deepEqual(await res.json(), { error: 'request body is larger than 512 KiB' });
  });

  async function subscribed() {
    const account = await signUp(t);
    const customer = `cus_${randomBytes(6).toString('hex')}`;
    const sub = `sub_${randomBytes(6).toString('hex')}`;
    return { ...account, customer, sub };
  }

  it('a valid event applies: checkout completed, then the subscription with its period', async () => {
    const a = await subscribed();
    const first = await send(checkoutCompleted(a.id, a.customer, a.sub));
    assert.deepEqual(first, { status: 200, body: { received: true, outcome: 'applied' } });
    let state = await subscription(t, a.cookie);
    assert.equal(state.plan, 'pro');
    assert.equal(state.status, 'active');

    const end = nowSeconds() + 30 * DAY;
    const created = await send(
      event(
        'customer.subscription.created',
        subscriptionObject(a.customer, a.sub, { period_end: end }),
      ),
    );
    assert.equal(created.body.outcome, 'applied');
    state = await subscription(t, a.cookie);
    assert.equal(state.renews_at, new Date(end * 1000).toISOString());
  });

  it('refuses a tampered body, a missing or wrong signature, and stale or future timestamps', async () => {
    const a = await subscribed();
    const built = checkoutCompleted(a.id, a.customer, a.sub);
    const header = sign(built.payload);
    const tampered = built.payload.replace(
      `"client_reference_id":"${a.id}"`,
      '"client_reference_id":"1"',
    );
    assert.notEqual(tampered, built.payload);
    for (const [payload, signature] of [
      [tampered, header],
      [built.payload, null],
      [built.payload, ''],
      [built.payload, 'garbage'],
      [built.payload, sign(built.payload, { secret: 'whsec_someone_else' })],
      [built.payload, sign(built.payload, { timestamp: nowSeconds() - 301 })],
      // (305: the server reads its clock a moment later, which shortens a future offset.)
      [built.payload, sign(built.payload, { timestamp: nowSeconds() + 305 })],
    ] as const) {
      const res = await deliver(payload, signature);
      assert.equal(res.status, 400, String(signature));
      assert.equal(((await res.json()) as { code: string }).code, 'invalid_request');
    }
    assert.equal(await countEvents(t, built.id), 0);
    assert.equal((await subscription(t, a.cookie)).plan, 'free');
    // Within the tolerance, either way, it is accepted.
    assert.equal((await send(built, { timestamp: nowSeconds() - 250 })).status, 200);
    assert.equal((await subscription(t, a.cookie)).plan, 'pro');
  });

  it('key rotation: two v1 signatures with one valid, and either configured secret', async () => {
    const a = await subscribed();
    const built = checkoutCompleted(a.id, a.customer, a.sub);
    const t0 = nowSeconds();
    const bogus = stripe.webhooks.generateTestHeaderString({
      payload: built.payload,
      secret: 'whsec_retired',
      timestamp: t0,
    });
    const valid = sign(built.payload, { timestamp: t0 });
    const both = `${bogus},v1=${valid.split('v1=')[1]}`;
    assert.equal((both.match(/v1=/g) ?? []).length, 2);
    const res = await deliver(built.payload, both);
    assert.equal(res.status, 200);

    const b = await subscribed();
    assert.equal(
      (await send(checkoutCompleted(b.id, b.customer, b.sub), { secret: OLD_SECRET })).status,
      200,
    );
    assert.equal((await subscription(t, b.cookie)).plan, 'pro');
  });

  it('the same event delivered twice at once is applied once', async () => {
    const a = await subscribed();
    const built = checkoutCompleted(a.id, a.customer, a.sub);
    const header = sign(built.payload);
    const answers = await Promise.all([
      deliver(built.payload, header),
      deliver(built.payload, header),
    ]);
    const outcomes = await Promise.all(
      answers.map(async (r) => {
        assert.equal(r.status, 200);
        return ((await r.json()) as { outcome: string }).outcome;
      }),
    );
    assert.deepEqual(outcomes.sort(), ['applied', 'duplicate']);
    assert.equal(await countEvents(t, built.id), 1);
    // And a later redelivery too.
    assert.equal((await send(built)).body.outcome, 'duplicate');
  });

  it('an older update delivered after a newer one is ignored', async () => {
    const a = await subscribed();
    await send(checkoutCompleted(a.id, a.customer, a.sub, nowSeconds() - 120));
    const newer = event(
      'customer.subscription.updated',
      subscriptionObject(a.customer, a.sub, { cancel_at_period_end: true }),
      nowSeconds() - 10,
    );
    const older = event(
      'customer.subscription.updated',
      subscriptionObject(a.customer, a.sub, { cancel_at_period_end: false }),
      nowSeconds() - 60,
    );
    assert.equal((await send(newer)).body.outcome, 'applied');
    assert.equal((await send(older)).body.outcome, 'ignored');
    const state = await subscription(t, a.cookie);
    assert.equal(state.cancel_at_period_end, true);
    assert.equal(state.plan, 'pro');
    // Also across types: a stale "deleted" after a newer update changes nothing...
    const staleDelete = event(
      'customer.subscription.deleted',
      subscriptionObject(a.customer, a.sub, { status: 'canceled' }),
      nowSeconds() - 30,
    );
    assert.equal((await send(staleDelete)).body.outcome, 'ignored');
    assert.equal((await subscription(t, a.cookie)).plan, 'pro');
    // ...and the real one, newer, ends Pro; nothing older brings it back.
    const deleted = event(
      'customer.subscription.deleted',
      subscriptionObject(a.customer, a.sub, { status: 'canceled' }),
    );
    assert.equal((await send(deleted)).body.outcome, 'applied');
    assert.deepEqual(await subscription(t, a.cookie), {
      plan: 'free',
      status: 'canceled',
      renews_at: null,
      cancel_at_period_end: false,
    });
    assert.equal((await send(older)).body.outcome, 'duplicate');
    const revival = event(
      'customer.subscription.updated',
      subscriptionObject(a.customer, a.sub),
      nowSeconds() - 5,
    );
    assert.equal((await send(revival)).body.outcome, 'ignored');
    assert.equal((await subscription(t, a.cookie)).plan, 'free');
  });

  it('statuses: past_due keeps Pro, unpaid is Free, invoices move it back and forth', async () => {
    const a = await subscribed();
    const t0 = nowSeconds() - 200;
    await send(event('customer.subscription.created', subscriptionObject(a.customer, a.sub), t0));
    // The subscription event names no account: the checkout links the customer first.
    assert.equal((await subscription(t, a.cookie)).plan, 'free');
    await send(checkoutCompleted(a.id, a.customer, a.sub, t0 + 1));
    await send(
      event('customer.subscription.created', subscriptionObject(a.customer, a.sub), t0 + 2),
    );
    assert.equal((await subscription(t, a.cookie)).status, 'active');

    const invoice = (type: string, at: number, periodEnd?: number) =>
      event(
        type,
        {
          id: `in_${at}`,
          object: 'invoice',
          customer: a.customer,
          parent: {
            type: 'subscription_details',
            subscription_details: { subscription: a.sub, metadata: {} },
          },
          lines: {
            object: 'list',
            data: periodEnd ? [{ period: { start: at, end: periodEnd } }] : [],
          },
        },
        at,
      );
    assert.equal((await send(invoice('invoice.payment_failed', t0 + 10))).body.outcome, 'applied');
    let state = await subscription(t, a.cookie);
    assert.deepEqual([state.plan, state.status], ['pro', 'past_due']);
    const nextEnd = nowSeconds() + 60 * DAY;
    assert.equal((await send(invoice('invoice.paid', t0 + 20, nextEnd))).body.outcome, 'applied');
    state = await subscription(t, a.cookie);
    assert.deepEqual([state.plan, state.status], ['pro', 'active']);
    assert.equal(state.renews_at, new Date(nextEnd * 1000).toISOString());
    await send(
      event(
        'customer.subscription.updated',
        subscriptionObject(a.customer, a.sub, { status: 'unpaid' }),
        t0 + 30,
      ),
    );
    state = await subscription(t, a.cookie);
    assert.deepEqual([state.plan, state.status], ['free', 'unpaid']);
  });

  it('events for unknown accounts are acknowledged and logged; other types are acknowledged', async () => {
    const built = event(
      'customer.subscription.updated',
      subscriptionObject('cus_nobody', 'sub_nobody'),
    );
    assert.deepEqual(await send(built), {
      status: 200,
      body: { received: true, outcome: 'unknown_account' },
    });
    assert.ok(
      t.logs.some((line) => line.includes('unknown account') && line.includes(built.id)),
      'a warning names the event',
    );
    const ghost = await send(checkoutCompleted(987654321, 'cus_ghost', 'sub_ghost'));
    assert.equal(ghost.body.outcome, 'unknown_account');
    const other = await send(event('customer.created', { id: 'cus_new', object: 'customer' }));
    assert.deepEqual(other, { status: 200, body: { received: true, outcome: 'unhandled' } });
    const bad = await send({ id: 'x', payload: '{"id":"evt_x","object":"event"}' });
    assert.equal(bad.status, 400);
  });

  it('a failure while applying is a 5xx and leaves no partial state; the retry applies', async () => {
    const a = await subscribed();
    const built = checkoutCompleted(a.id, a.customer, a.sub);
    const restore = await failProUpgrades(t, a.id);
    try {
      const failed = await send(built);
      assert.ok(failed.status >= 500, String(failed.status));
      assert.equal(failed.body.error, 'internal server error');
      assert.deepEqual(await subscription(t, a.cookie), {
        plan: 'free',
        status: 'none',
        renews_at: null,
        cancel_at_period_end: false,
      });
      assert.equal(await countEvents(t, built.id), 0, 'the event id is not recorded');
      assert.equal(await t.deps.ctx.store.billing.find(a.id), null, 'no billing row either');
    } finally {
      await restore();
    }
    assert.equal((await send(built)).body.outcome, 'applied');
    assert.equal((await subscription(t, a.cookie)).plan, 'pro');
  });
});
