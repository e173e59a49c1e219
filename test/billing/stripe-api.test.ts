import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import Stripe from 'stripe';
import { describeEachDatabase, signUp, startApp, type TestApp } from '../helpers/app.ts';
import { type FakeStripe, startFakeStripe } from './fake-stripe.ts';
import { subscription } from './helpers.ts';

const SECRET_KEY = 'sk_test_shotsmith_fake';
const WEBHOOK_SECRET = 'whsec_test_api';
const PRICE = 'price_test_pro';

describeEachDatabase('Stripe API calls (against a local stand-in)', (db) => {
  let t: TestApp;
  let fake: FakeStripe;
  const stripe = new Stripe(SECRET_KEY);
  before(async () => {
    fake = await startFakeStripe();
    t = await startApp({
      db,
      env: {
        STRIPE_SECRET_KEY: SECRET_KEY,
        STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
        STRIPE_PRICE_ID: PRICE,
        STRIPE_API_BASE: fake.url,
      },
    });
  });
  after(async () => {
    await t.close();
    await fake.close();
  });

  it('checkout: one customer per account, a subscription-mode session with the account as reference', async () => {
    const account = await signUp(t);
    fake.calls.length = 0;
    const res = await t.fetch('/v1/billing/checkout', {
      method: 'POST',
      cookie: account.cookie,
      json: {},
    });
    assert.equal(res.status, 200);
    const { url } = (await res.json()) as { url: string };
    assert.match(url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_fake\d+$/);

    assert.deepEqual(
      fake.calls.map((c) => `${c.method} ${c.path}`),
      ['POST /v1/customers', 'POST /v1/checkout/sessions'],
    );
    const [customer, session] = fake.calls as [(typeof fake.calls)[0], (typeof fake.calls)[0]];
    for (const call of fake.calls) {
      assert.equal(call.headers.authorization, `Bearer ${SECRET_KEY}`);
      assert.match(String(call.headers['content-type']), /^application\/x-www-form-urlencoded/);
      assert.equal(call.headers['stripe-version'], Stripe.API_VERSION);
    }
    assert.equal(customer.form.email, account.email);
    assert.equal(customer.form['metadata[account_id]'], String(account.id));
    assert.ok(customer.headers['idempotency-key'], 'customer creation is idempotent');

    assert.equal(session.form.mode, 'subscription');
    assert.match(session.form.customer ?? '', /^cus_fake\d+$/);
    assert.equal(session.form.client_reference_id, String(account.id));
    assert.equal(session.form['line_items[0][price]'], PRICE);
    assert.equal(session.form['line_items[0][quantity]'], '1');
    assert.equal(session.form.success_url, `${t.url}/dashboard?billing=success`);
    assert.equal(session.form.cancel_url, `${t.url}/dashboard?billing=cancel`);
    assert.equal(session.form['subscription_data[metadata][account_id]'], String(account.id));
    assert.equal(session.form['metadata[account_id]'], String(account.id));

    // A second checkout reuses the customer.
    fake.calls.length = 0;
    const again = await t.fetch('/v1/billing/checkout', { method: 'POST', cookie: account.cookie });
    assert.equal(again.status, 200);
    assert.deepEqual(
      fake.calls.map((c) => `${c.method} ${c.path}`),
      ['POST /v1/checkout/sessions'],
    );
    assert.equal(fake.calls[0]?.form.customer, session.form.customer);
    // Starting a checkout changes nothing by itself.
    assert.equal((await subscription(t, account.cookie)).status, 'none');
  });

  it('portal: a Billing Portal session for the customer, returning to the dashboard', async () => {
    const account = await signUp(t);
    fake.calls.length = 0;
    const none = await t.fetch('/v1/billing/portal', { method: 'POST', cookie: account.cookie });
    assert.equal(none.status, 409, 'no customer yet');
    assert.equal(fake.calls.length, 0);

    assert.equal(
      (await t.fetch('/v1/billing/checkout', { method: 'POST', cookie: account.cookie })).status,
      200,
    );
    const customerId = fake.calls.find((c) => c.path === '/v1/checkout/sessions')?.form.customer;
    fake.calls.length = 0;
    const res = await t.fetch('/v1/billing/portal', { method: 'POST', cookie: account.cookie });
    assert.equal(res.status, 200);
    assert.match(
      ((await res.json()) as { url: string }).url,
      /^https:\/\/billing\.stripe\.com\/p\/session\//,
    );
    assert.equal(fake.calls.length, 1);
    const call = fake.calls[0];
    assert.equal(call?.path, '/v1/billing_portal/sessions');
    assert.equal(call?.form.customer, customerId);
    assert.equal(call?.form.return_url, `${t.url}/dashboard`);
  });

  it('the webhook for the paid checkout makes the account Pro; another checkout is 409', async () => {
    const account = await signUp(t);
    fake.calls.length = 0;
    assert.equal(
      (await t.fetch('/v1/billing/checkout', { method: 'POST', cookie: account.cookie })).status,
      200,
    );
    const customer = fake.calls.find((c) => c.path === '/v1/checkout/sessions')?.form.customer;
    const payload = JSON.stringify({
      id: `evt_api_${account.id}`,
      object: 'event',
      type: 'checkout.session.completed',
      created: Math.floor(Date.now() / 1000),
      data: {
        object: {
          id: 'cs_test_x',
          object: 'checkout.session',
          mode: 'subscription',
          payment_status: 'paid',
          client_reference_id: String(account.id),
          customer,
          subscription: `sub_api_${account.id}`,
        },
      },
    });
    const res = await t.fetch('/v1/billing/webhook', {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': stripe.webhooks.generateTestHeaderString({
          payload,
          secret: WEBHOOK_SECRET,
        }),
      },
      body: payload,
    });
    assert.equal(res.status, 200);
    assert.equal((await subscription(t, account.cookie)).plan, 'pro');
    fake.calls.length = 0;
    const dup = await t.fetch('/v1/billing/checkout', { method: 'POST', cookie: account.cookie });
    assert.equal(dup.status, 409);
    assert.equal(fake.calls.length, 0);
  });

  it('a Stripe API error is a 503, and nothing is half-done', async () => {
    const account = await signUp(t);
    fake.failNext(400, 'No such price');
    const res = await t.fetch('/v1/billing/checkout', { method: 'POST', cookie: account.cookie });
    assert.equal(res.status, 503);
    const body = (await res.json()) as { error: string; code: string };
    assert.equal(body.code, 'overloaded');
    assert.doesNotMatch(body.error, /No such price|sk_test/);
    assert.equal((await subscription(t, account.cookie)).status, 'none');
  });

  it('local provider pages do not exist when Stripe is configured', async () => {
    assert.equal((await t.fetch(`/billing/local/checkout/cs_local_${'A'.repeat(43)}`)).status, 404);
  });
});
