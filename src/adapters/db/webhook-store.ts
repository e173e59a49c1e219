import type { Kysely, Selectable } from 'kysely';
import type { DeliveryStatus, WebhookDelivery, WebhookStore } from '../../domain/store.ts';
import type { DialectName } from './connect.ts';
import { lockedRows, lockUser } from './row-locks.ts';
import type { Database, WebhookDeliveriesTable } from './schema.ts';

const toDelivery = (row: Selectable<WebhookDeliveriesTable>): WebhookDelivery => ({
  id: row.id,
  userId: Number(row.user_id),
  jobId: row.job_id,
  url: row.url,
  eventType: row.event_type,
  payload: row.payload,
  status: row.status as DeliveryStatus,
  attempts: Number(row.attempts),
  nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
  lastStatus: row.last_status === null ? null : Number(row.last_status),
  lastError: row.last_error,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/**
 * Webhook deliveries and their attempts; taken like jobs, by lease. A job's delivery is
 * written with its last status, in the same transaction (job-store.ts `finish`).
 */
export function webhookStore(db: Kysely<Database>, dialect: DialectName): WebhookStore {
  return { ...sending(db, dialect), ...accountDeliveries(db, dialect), ...deliverySweeps(db) };
}

/** What the senders do: deliveries taken by lease, their attempts recorded, let go. */
function sending(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<WebhookStore, 'claimDue' | 'recordAttempt' | 'release'> {
  return {
    async claimDue({ owner, now, leaseMs, limit, perAccount }) {
      // Accounts with `perAccount` deliveries being sent wait their turn: one endpoint that
      // never answers cannot hold every sending slot.
      const busy = db
        .selectFrom('webhook_deliveries')
        .select('user_id')
        .where('lease_expires_at', '>=', now)
        .groupBy('user_id')
        .having((eb) => eb.fn.countAll(), '>=', perAccount);
      let due = db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((eb) =>
          eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]),
        )
        .where('user_id', 'not in', busy)
        .orderBy('next_attempt_at')
        .limit(limit);
      due = lockedRows(due, dialect, 'skip');
      const rows = await db
        .updateTable('webhook_deliveries')
        .set({ lease_owner: owner, lease_expires_at: now + leaseMs })
        .where('id', 'in', due)
        .returningAll()
        .execute();
      return rows.map(toDelivery);
    },

    async recordAttempt({ id, owner }, attempt, next) {
      return db.transaction().execute(async (trx) => {
        const res = await trx
          .updateTable('webhook_deliveries')
          .set((eb) => ({
            status: next.status,
            next_attempt_at: next.nextAttemptAt,
            attempts: eb('attempts', '+', 1),
            last_status: attempt.statusCode,
            last_error: attempt.error,
            lease_owner: null,
            lease_expires_at: null,
            updated_at: attempt.attemptedAt,
          }))
          .where('id', '=', id)
          .where('lease_owner', '=', owner)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) return false;
        await trx
          .insertInto('webhook_attempts')
          .values({
            delivery_id: id,
            attempted_at: attempt.attemptedAt,
            status_code: attempt.statusCode,
            error: attempt.error,
            duration_ms: Math.round(attempt.durationMs),
          })
          .execute();
        return true;
      });
    },

    async release({ id, owner }) {
      const res = await db
        .updateTable('webhook_deliveries')
        .set({ lease_owner: null, lease_expires_at: null })
        .where('id', '=', id)
        .where('lease_owner', '=', owner)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
  };
}

/** An account's deliveries: listed, their attempts read, one sent again. */
function accountDeliveries(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<WebhookStore, 'list' | 'attempts' | 'resend'> {
  return {
    async list(userId, limit) {
      const rows = await db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
      return rows.map(toDelivery);
    },

    async attempts(userId, id, limit) {
      const owned = await db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('id', '=', id)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (!owned) return null;
      const rows = await db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('delivery_id', '=', id)
        .orderBy('attempted_at', 'desc')
        .limit(limit)
        .execute();
      return rows.reverse().map((r) => ({
        attemptedAt: Number(r.attempted_at),
        statusCode: r.status_code === null ? null : Number(r.status_code),
        error: r.error,
        durationMs: Number(r.duration_ms),
      }));
    },

    async resend(userId, id, { now, maxPending }) {
      return db.transaction().execute(async (trx) => {
        await lockUser(trx, dialect, userId);
        const row = await trx
          .selectFrom('webhook_deliveries')
          .select(['status', 'lease_expires_at'])
          .where('id', '=', id)
          .where('user_id', '=', userId)
          .executeTakeFirst();
        if (!row) return 'not_found' as const;
        const leased = row.lease_expires_at !== null && Number(row.lease_expires_at) >= now;
        if (row.status === 'pending' || leased) return 'busy' as const;
        const { n } = await trx
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxPending) return 'too_many' as const;
        await trx
          .updateTable('webhook_deliveries')
          .set({ status: 'pending', next_attempt_at: now, updated_at: now })
          .where('id', '=', id)
          .execute();
        return 'queued' as const;
      });
    },
  };
}

/** Finished deliveries pruned. */
function deliverySweeps(db: Kysely<Database>): Pick<WebhookStore, 'prune'> {
  return {
    async prune(before) {
      // Attempts go with their delivery (ON DELETE CASCADE).
      const res = await db
        .deleteFrom('webhook_deliveries')
        .where('status', '!=', 'pending')
        .where('updated_at', '<', before)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
