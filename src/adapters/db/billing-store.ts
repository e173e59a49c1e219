/**
 * Accounts' links to the payment provider and the provider's events already applied
 * (domain/store.ts `BillingStore`).
 */
import type { Kysely, Selectable } from 'kysely';
import type { SubscriptionStatus } from '../../domain/billing/subscription-state.ts';
import type { BillingAccount, BillingStore } from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { lockUser } from './row-locks.ts';
import type { BillingAccountsTable, Database } from './schema.ts';

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
