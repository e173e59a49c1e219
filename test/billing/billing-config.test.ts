import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.ts';

const STRIPE = {
  STRIPE_SECRET_KEY: 'sk_live_abc123',
  STRIPE_WEBHOOK_SECRET: 'whsec_one, whsec_two',
  STRIPE_PRICE_ID: 'price_123',
};

/** A production environment with its required server secret. */
const PRODUCTION = { NODE_ENV: 'production', SERVER_SECRET: 'x'.repeat(32) };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
}

test('the local provider by default, Stripe when all three settings are given', () => {
  assert.deepEqual(loadConfig({}).billing, { provider: 'local' });
  assert.deepEqual(loadConfig(STRIPE).billing, {
    provider: 'stripe',
    secretKey: 'sk_live_abc123',
    webhookSecrets: ['whsec_one', 'whsec_two'],
    priceId: 'price_123',
    apiBase: undefined,
  });
  const viaBase = loadConfig({ ...STRIPE, STRIPE_API_BASE: 'http://127.0.0.1:12111' }).billing;
  assert.equal(viaBase.provider === 'stripe' && viaBase.apiBase?.port, '12111');
  // Outside production an explicit local wins, so tests can run it beside Stripe keys.
  assert.deepEqual(loadConfig({ ...STRIPE, BILLING_PROVIDER: 'local' }).billing, {
    provider: 'local',
  });
});

test('Stripe settings are all or none, and look like what they are', () => {
  assert.match(
    problems({ STRIPE_SECRET_KEY: 'sk_test_x' }).join('\n'),
    /STRIPE_WEBHOOK_SECRET, STRIPE_PRICE_ID not/,
  );
  assert.match(
    problems({ BILLING_PROVIDER: 'stripe' }).join('\n'),
    /BILLING_PROVIDER=stripe needs/,
  );
  const bad = problems({
    STRIPE_SECRET_KEY: 'pk_live_publishable',
    STRIPE_WEBHOOK_SECRET: 'secret',
    STRIPE_PRICE_ID: 'prod_123',
  });
  assert.equal(bad.length, 3, bad.join('\n'));
  assert.match(
    problems({ BILLING_PROVIDER: 'paypal' }).join('\n'),
    /BILLING_PROVIDER must be one of/,
  );
});

test('production refuses the local provider unless LOCAL_BILLING_IN_PRODUCTION=1, never beside Stripe', () => {
  assert.match(
    problems({ ...PRODUCTION }).join('\n'),
    /local billing provider is refused with NODE_ENV=production.*LOCAL_BILLING_IN_PRODUCTION=1/,
  );
  // Naming the provider is not enough: only the explicit switch says the operator means it.
  assert.match(
    problems({ ...PRODUCTION, BILLING_PROVIDER: 'local' }).join('\n'),
    /LOCAL_BILLING_IN_PRODUCTION=1/,
  );
  assert.match(
    problems({ ...PRODUCTION, LOCAL_BILLING_IN_PRODUCTION: '0' }).join('\n'),
    /LOCAL_BILLING_IN_PRODUCTION=1/,
  );
  assert.deepEqual(loadConfig({ ...PRODUCTION, LOCAL_BILLING_IN_PRODUCTION: '1' }).billing, {
    provider: 'local',
  });
  assert.deepEqual(
    loadConfig({
      ...PRODUCTION,
      BILLING_PROVIDER: 'local',
      LOCAL_BILLING_IN_PRODUCTION: '1',
    }).billing,
    { provider: 'local' },
  );
  assert.match(
    problems({
      ...STRIPE,
      ...PRODUCTION,
      BILLING_PROVIDER: 'local',
      LOCAL_BILLING_IN_PRODUCTION: '1',
    }).join('\n'),
    /refused in production while Stripe is configured/,
  );
  assert.equal(loadConfig({ ...STRIPE, ...PRODUCTION }).billing.provider, 'stripe');
  // Outside production the switch changes nothing.
  assert.deepEqual(loadConfig({ NODE_ENV: 'development' }).billing, { provider: 'local' });
});
