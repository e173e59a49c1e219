import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type BillingEvent,
  type BillingState,
  NO_SUBSCRIPTION,
  nextState,
  planFor,
} from './subscription-state.ts';

const T = 1_800_000_000_000;
const base = { type: 't', accountId: 1, customerId: 'cus_1' };
const sub = (
  createdAt: number,
  fields: Partial<Extract<BillingEvent, { kind: 'subscription' }>> = {},
): BillingEvent => ({
  ...base,
  id: `evt_${createdAt}_${Math.random()}`,
  createdAt,
  kind: 'subscription',
  subscriptionId: 'sub_1',
  status: 'active',
  renewsAt: T + 30 * 86_400_000,
  cancelAtPeriodEnd: false,
  ...fields,
});
const active: BillingState = {
  subscriptionId: 'sub_1',
  status: 'active',
  renewsAt: T + 30 * 86_400_000,
  cancelAtPeriodEnd: false,
  stateAt: T,
};

test('plan is pro while active or past due, free otherwise', () => {
  assert.equal(planFor('active'), 'pro');
  assert.equal(planFor('past_due'), 'pro');
  for (const s of ['none', 'canceled', 'unpaid', 'incomplete'] as const)
    assert.equal(planFor(s), 'free');
});

test('a subscription event sets the state and its time', () => {
  const next = nextState(NO_SUBSCRIPTION, sub(T));
  assert.deepEqual(next, active);
});

test('an older event never overwrites newer state', () => {
  const cancelled = nextState(active, sub(T + 60_000, { cancelAtPeriodEnd: true }));
  assert.equal(cancelled?.cancelAtPeriodEnd, true);
  assert.equal(nextState(cancelled as BillingState, sub(T + 30_000)), null);
});

test('a canceled subscription is never revived, whatever the timestamps', () => {
  const ended = nextState(active, sub(T + 1000, { status: 'canceled' }));
  assert.equal(ended?.status, 'canceled');
  assert.equal(ended?.renewsAt, null);
  assert.equal(nextState(ended as BillingState, sub(T + 5000)), null);
});

test('same-second ties go to the later lifecycle stage', () => {
  assert.equal(nextState(active, sub(T, { status: 'incomplete' })), null);
  assert.equal(nextState(active, sub(T, { cancelAtPeriodEnd: true }))?.cancelAtPeriodEnd, true);
  assert.equal(nextState(active, sub(T, { status: 'canceled' }))?.status, 'canceled');
});

test("another subscription's end does not end the live one", () => {
  assert.equal(
    nextState(active, sub(T + 1000, { subscriptionId: 'sub_old', status: 'canceled' })),
    null,
  );
  const fresh = nextState(
    { ...active, status: 'canceled', renewsAt: null },
    sub(T + 1000, { subscriptionId: 'sub_2' }),
  );
  assert.equal(fresh?.subscriptionId, 'sub_2');
  assert.equal(fresh?.status, 'active');
});

test('checkout completion links the subscription and never undoes its own events', () => {
  const checkout = (createdAt: number, subscriptionId: string, paid = true): BillingEvent => ({
    ...base,
    id: 'evt_c',
    createdAt,
    kind: 'checkout_completed',
    subscriptionId,
    paid,
  });
  assert.deepEqual(nextState(NO_SUBSCRIPTION, checkout(T, 'sub_1')), {
    subscriptionId: 'sub_1',
    status: 'active',
    renewsAt: null,
    cancelAtPeriodEnd: false,
    stateAt: T,
  });
  const cancelling = { ...active, cancelAtPeriodEnd: true };
  assert.deepEqual(nextState(cancelling, checkout(T, 'sub_1')), cancelling);
  assert.equal(nextState(NO_SUBSCRIPTION, checkout(T, 'sub_1', false))?.status, 'incomplete');
});

test('invoices move active <-> past_due for the tracked subscription only', () => {
  const failed: BillingEvent = {
    ...base,
    id: 'e1',
    createdAt: T + 1,
    kind: 'invoice_failed',
    subscriptionId: 'sub_1',
  };
  const pastDue = nextState(active, failed);
  assert.equal(pastDue?.status, 'past_due');
  const paid: BillingEvent = {
    ...base,
    id: 'e2',
    createdAt: T + 2,
    kind: 'invoice_paid',
    subscriptionId: 'sub_1',
    periodEnd: T + 60 * 86_400_000,
  };
  const back = nextState(pastDue as BillingState, paid);
  assert.equal(back?.status, 'active');
  assert.equal(back?.renewsAt, T + 60 * 86_400_000);
  assert.equal(nextState(active, { ...paid, subscriptionId: 'sub_other' }), null);
  assert.equal(nextState(active, { ...failed, subscriptionId: null }), null);
});

test('unhandled events change nothing', () => {
  assert.equal(nextState(active, { ...base, id: 'x', createdAt: T + 1, kind: 'unhandled' }), null);
});
