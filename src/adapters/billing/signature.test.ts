import assert from 'node:assert/strict';
import { test } from 'node:test';
import Stripe from 'stripe';
import { signWebhookPayload, verifyWebhookSignature } from './signature.ts';

const stripe = new Stripe('sk_test_unit');
const payload = JSON.stringify({ id: 'evt_1', object: 'event' });
const now = 1_800_000_000_000;
const t = now / 1000;

test("our signatures and Stripe's test headers are the same scheme", () => {
  const ours = signWebhookPayload(payload, 'whsec_a', t);
  const theirs = stripe.webhooks.generateTestHeaderString({
    payload,
    secret: 'whsec_a',
    timestamp: t,
  });
  assert.equal(ours, theirs);
  assert.equal(
    verifyWebhookSignature({ payload, header: theirs, secrets: ['whsec_a'], now }),
    'ok',
  );
});

test('refuses a changed body, a wrong secret, a missing or malformed header', () => {
  const header = signWebhookPayload(payload, 'whsec_a', t);
  assert.equal(
    verifyWebhookSignature({ payload: `${payload} `, header, secrets: ['whsec_a'], now }),
    'mismatch',
  );
  assert.equal(verifyWebhookSignature({ payload, header, secrets: ['whsec_b'], now }), 'mismatch');
  assert.equal(
    verifyWebhookSignature({ payload, header: undefined, secrets: ['whsec_a'], now }),
    'missing',
  );
  assert.equal(
    verifyWebhookSignature({ payload, header: 'v1=abc', secrets: ['whsec_a'], now }),
    'malformed',
  );
  assert.equal(
    verifyWebhookSignature({ payload, header: `t=${t}`, secrets: ['whsec_a'], now }),
    'malformed',
  );
});

test('300 seconds either way, no more', () => {
  for (const [offset, expected] of [
    [-300, 'ok'],
    [300, 'ok'],
    [-301, 'stale'],
    [301, 'future'],
  ] as const) {
    const header = signWebhookPayload(payload, 'whsec_a', t + offset);
    assert.equal(
      verifyWebhookSignature({ payload, header, secrets: ['whsec_a'], now }),
      expected,
      String(offset),
    );
  }
});

test('rotation: any of several v1 signatures against any of several secrets', () => {
  const good = signWebhookPayload(payload, 'whsec_new', t).split('v1=')[1];
  const header = `t=${t},v1=${'0'.repeat(64)},v0=zzz,v1=${good}`;
  assert.equal(verifyWebhookSignature({ payload, header, secrets: ['whsec_new'], now }), 'ok');
  assert.equal(
    verifyWebhookSignature({ payload, header, secrets: ['whsec_old', 'whsec_new'], now }),
    'ok',
  );
  assert.equal(
    verifyWebhookSignature({ payload, header, secrets: ['whsec_old'], now }),
    'mismatch',
  );
});
