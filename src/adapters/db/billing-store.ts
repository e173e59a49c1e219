import type { Kysely, Selectable } from 'kysely';
import type { SubscriptionStatus } from '../../domain/billing/subscription-state.ts';
import type { BillingAccount, BillingStore } from '../../domain/store.ts';
import type {
  LocalBillingStore,
  LocalSession,
  LocalSubscription,
} from '../billing/local-provider.ts';
import type { DialectName } from './connect.ts';
import { lockUser } from './lock-user.ts';
import type {
  BillingAccountsTable,
  Database,
  LocalBillingSessionsTable,
  LocalBillingSubscriptionsTable,
} from './schema.ts';

const toAccount = (row: Selectable<BillingAccountsTable>): BillingAccount => ({
  userId: Number(row.user_id),
  provider: row.provider,
  customerId: row.customer_id,
  subscriptionId: row.subscription_id,
  status: row.status as SubscriptionStatus,
  renewsAt: row.renews_at,
  cancelAtPeriodEnd: Boolean(row.cancel_at_period_end),
  stateAt: row.state_at,
});

export function billingStore(db: Kysely<Database>, dialect: DialectName): BillingStore {
  const find = async (userId: number) => {
    const row = await db
      .selectFrom('billing_accounts')
      .selectAll()
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row ? toAccount(row) : null;
  };
  return {
    find,
    async findForUpdate(userId) {
      await lockUser(db, dialect, userId);
      return find(userId);
    },
    async findUserIdByCustomer(customerId) {
      const row = await db
        .selectFrom('billing_accounts')
        .select('user_id')
        .where('customer_id', '=', customerId)
        .executeTakeFirst();
      return row ? Number(row.user_id) : null;
    },
    async saveCustomer({ userId, provider, customerId, now }) {
      await db
        .insertInto('billing_accounts')
        .values({
          user_id: userId,
          provider,
          customer_id: customerId,
          status: 'none',
          cancel_at_period_end: false,
          updated_at: now,
        })
        .onConflict((oc) =>
          oc
            .column('user_id')
            .doUpdateSet((eb) => ({
              provider: eb.ref('excluded.provider'),
              customer_id: eb.ref('excluded.customer_id'),
              updated_at: eb.ref('excluded.updated_at'),
            }))
            // Only a customer of another provider is replaced (the operator switched).
            .whereRef('billing_accounts.provider', '<>', 'excluded.provider'),
        )
        .execute();
      const row = await db
        .selectFrom('billing_accounts')
        .select('customer_id')
        .where('user_id', '=', userId)
        .executeTakeFirstOrThrow();
      return row.customer_id;
    },
    async recordEvent({ id, type, userId, receivedAt }) {
      // On PostgreSQL a concurrent insert of the same id waits for the first transaction
      // and then does nothing, so exactly one delivery gets `true`.
      const row = await db
        .insertInto('billing_events')
        .values({ id, type, user_id: userId, received_at: receivedAt })
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },
    async saveState({ userId, provider, customerId, state, now }) {
      const fields = {
        subscription_id: state.subscriptionId,
        status: state.status,
        renews_at: state.renewsAt,
        cancel_at_period_end: state.cancelAtPeriodEnd,
        state_at: state.stateAt,
        updated_at: now,
      };
      await db
        .insertInto('billing_accounts')
        .values({ user_id: userId, provider, customer_id: customerId, ...fields })
        .onConflict((oc) => oc.column('user_id').doUpdateSet(fields))
        .execute();
    },
    async pruneEvents(before) {
      const res = await db
        .deleteFrom('billing_events')
        .where('received_at', '<', before)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}

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
  const findSubscription = async (id: string) => {
    const row = await db
      .selectFrom('local_billing_subscriptions')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toSubscription(row) : null;
  };
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
    findSubscription,
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
