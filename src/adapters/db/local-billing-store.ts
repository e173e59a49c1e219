/**
 * The built-in payment provider's checkout sessions and subscriptions: what Stripe keeps on
 * its side, kept in the service's database for the stand-in.
 */
import type { Kysely, Selectable } from 'kysely';
import type {
  LocalBillingStore,
  LocalSession,
  LocalSubscription,
} from '../billing/local-provider.ts';
import type { DialectName } from './connect.ts';
import { lockUser } from './row-locks.ts';
import type {
  Database,
  LocalBillingSessionsTable,
  LocalBillingSubscriptionsTable,
} from './schema.ts';

const toSession = (row: Selectable<LocalBillingSessionsTable>): LocalSession => ({
  id: row.id,
  kind: row.kind as LocalSession['kind'],
  userId: Number(row.user_id),
  customerId: row.customer_id,
  status: row.status as LocalSession['status'],
  successUrl: row.success_url,
  cancelUrl: row.cancel_url,
  subscriptionId: row.subscription_id,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

const toSubscription = (row: Selectable<LocalBillingSubscriptionsTable>): LocalSubscription => ({
  id: row.id,
  userId: Number(row.user_id),
  customerId: row.customer_id,
  status: row.status as LocalSubscription['status'],
  currentPeriodStart: row.current_period_start,
  currentPeriodEnd: row.current_period_end,
  cancelAtPeriodEnd: Boolean(row.cancel_at_period_end),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** The local test provider's records (src/adapters/billing/local-provider.ts). */
export function createLocalBillingStore(
  db: Kysely<Database>,
  dialect: DialectName,
): LocalBillingStore {
  return { ...checkoutSessions(db, dialect), ...subscriptions(db) };
}

/** Checkout sessions: opened, read, completed (a subscription begins) or expired. */
function checkoutSessions(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<
  LocalBillingStore,
  'insertSession' | 'findSession' | 'completeCheckout' | 'expireCheckout'
> {
  return {
    async insertSession(s) {
      await db
        .insertInto('local_billing_sessions')
        .values({
          id: s.id,
          kind: s.kind,
          user_id: s.userId,
          customer_id: s.customerId,
          status: s.status,
          success_url: s.successUrl,
          cancel_url: s.cancelUrl,
          subscription_id: s.subscriptionId,
          created_at: s.createdAt,
          expires_at: s.expiresAt,
        })
        .execute();
    },
    async findSession(id) {
      const row = await db
        .selectFrom('local_billing_sessions')
        .selectAll()
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toSession(row) : null;
    },
    async completeCheckout({ sessionId, subscription: sub }) {
      return db.transaction().execute(async (trx) => {
        await lockUser(trx, dialect, sub.userId);
        const session = await trx
          .selectFrom('local_billing_sessions')
          .select('status')
          .where('id', '=', sessionId)
          .executeTakeFirst();
        if (session?.status !== 'open') return 'not_open' as const;
        const active = await trx
          .selectFrom('local_billing_subscriptions')
          .select('id')
          .where('customer_id', '=', sub.customerId)
          .where('status', '=', 'active')
          .executeTakeFirst();
        if (active) return 'already_subscribed' as const;
        await trx
          .insertInto('local_billing_subscriptions')
          .values({
            id: sub.id,
            user_id: sub.userId,
            customer_id: sub.customerId,
            status: sub.status,
            current_period_start: sub.currentPeriodStart,
            current_period_end: sub.currentPeriodEnd,
            cancel_at_period_end: sub.cancelAtPeriodEnd,
            created_at: sub.createdAt,
            updated_at: sub.updatedAt,
          })
          .execute();
        await trx
          .updateTable('local_billing_sessions')
          .set({ status: 'complete', subscription_id: sub.id })
          .where('id', '=', sessionId)
          .execute();
        return 'completed' as const;
      });
    },
    async expireCheckout(sessionId) {
      const res = await db
        .updateTable('local_billing_sessions')
        .set({ status: 'expired' })
        .where('id', '=', sessionId)
        .where('status', '=', 'open')
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };
}

/** Subscriptions: by id, the latest of a customer, cancelled at period end, renewed when due. */
function subscriptions(
  db: Kysely<Database>,
): Pick<
  LocalBillingStore,
  'findSubscription' | 'latestSubscription' | 'setCancelAtPeriodEnd' | 'due' | 'advance'
> {
  return {
    findSubscription: (id) => findSubscription(db, id),
    async latestSubscription(customerId) {
      const row = await db
        .selectFrom('local_billing_subscriptions')
        .selectAll()
        .where('customer_id', '=', customerId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      return row ? toSubscription(row) : null;
    },
    async setCancelAtPeriodEnd(id, cancel, now) {
      const row = await db
        .updateTable('local_billing_subscriptions')
        .set({ cancel_at_period_end: cancel, updated_at: now })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .returningAll()
        .executeTakeFirst();
      return row ? toSubscription(row) : null;
    },
    async due(now, limit) {
      const rows = await db
        .selectFrom('local_billing_subscriptions')
        .selectAll()
        .where('status', '=', 'active')
        .where('current_period_end', '<=', now)
        .orderBy('current_period_end')
        .limit(limit)
        .execute();
      return rows.map(toSubscription);
    },
    async advance(id, fromPeriodEnd, next) {
      const res = await db
        .updateTable('local_billing_subscriptions')
        .set({
          status: next.status,
          current_period_start: next.currentPeriodStart,
          current_period_end: next.currentPeriodEnd,
          cancel_at_period_end: next.cancelAtPeriodEnd,
          updated_at: next.updatedAt,
        })
        .where('id', '=', id)
        .where('status', '=', 'active')
        .where('current_period_end', '=', fromPeriodEnd)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };
}

async function findSubscription(
  db: Kysely<Database>,
  id: string,
): Promise<LocalSubscription | null> {
  const row = await db
    .selectFrom('local_billing_subscriptions')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? toSubscription(row) : null;
}
