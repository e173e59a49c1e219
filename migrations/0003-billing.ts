import type { Kysely } from 'kysely';
import { type Dialect, flag, millis, notNull, ref } from './helpers.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // One row per account that ever started a checkout: the provider's customer and the
  // subscription state as the provider's events last described it.
  await db.schema
    .createTable('billing_accounts')
    .addColumn('user_id', ref(dialect), (c) =>
      c.primaryKey().references('users.id').onDelete('cascade'),
    )
    .addColumn('provider', 'text', notNull)
    .addColumn('customer_id', 'text', notNull)
    .addColumn('subscription_id', 'text')
    // none, active, past_due, canceled, incomplete, unpaid
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('none'))
    .addColumn('renews_at', millis(dialect))
    .addColumn('cancel_at_period_end', flag(dialect), notNull)
    // Creation time of the newest event applied: an older event never overwrites newer state.
    .addColumn('state_at', millis(dialect))
    .addColumn('updated_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('billing_accounts_customer_idx')
    .on('billing_accounts')
    .column('customer_id')
    .unique()
    .execute();

  // Provider event ids already applied, written in the transaction that applies the event.
  await db.schema
    .createTable('billing_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', notNull)
    .addColumn('user_id', ref(dialect))
    .addColumn('received_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('billing_events_received_idx')
    .on('billing_events')
    .column('received_at')
    .execute();

  // The local test provider's own records (what Stripe keeps on its side): checkout and
  // portal sessions, whose unguessable id is the capability, and subscriptions.
  await db.schema
    .createTable('local_billing_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // checkout or portal
    .addColumn('kind', 'text', notNull)
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('customer_id', 'text', notNull)
    // checkout: open, complete, expired; portal: open
    .addColumn('status', 'text', notNull)
    .addColumn('success_url', 'text', notNull)
    .addColumn('cancel_url', 'text')
    .addColumn('subscription_id', 'text')
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('expires_at', millis(dialect), notNull)
    .execute();

  await db.schema
    .createTable('local_billing_subscriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', ref(dialect), (c) =>
      c.notNull().references('users.id').onDelete('cascade'),
    )
    .addColumn('customer_id', 'text', notNull)
    // active or canceled
    .addColumn('status', 'text', notNull)
    .addColumn('current_period_start', millis(dialect), notNull)
    .addColumn('current_period_end', millis(dialect), notNull)
    .addColumn('cancel_at_period_end', flag(dialect), notNull)
    .addColumn('created_at', millis(dialect), notNull)
    .addColumn('updated_at', millis(dialect), notNull)
    .execute();
  await db.schema
    .createIndex('local_billing_subscriptions_due_idx')
    .on('local_billing_subscriptions')
    .columns(['status', 'current_period_end'])
    .execute();
  await db.schema
    .createIndex('local_billing_subscriptions_customer_idx')
    .on('local_billing_subscriptions')
    .column('customer_id')
    .execute();
}
