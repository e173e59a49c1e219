/**
 * Accounts (domain/store.ts `UserStore`): sign-up, look-ups, the plan, and the nonce the
 * account's webhook secret is derived from.
 */
import type { Kysely, Selectable } from 'kysely';
import type { PlanName } from '../../domain/plans.ts';
import type { User, UserStore } from '../../domain/store.ts';
import type { Database, UsersTable } from './schema.ts';

/** An account's row as the domain sees it (sessions and keys read their owner with it too). */
export const toUser = (
  row: Pick<Selectable<UsersTable>, 'id' | 'email' | 'plan' | 'created_at'>,
): User => ({
  id: Number(row.id),
  email: row.email,
  plan: row.plan as PlanName,
  createdAt: row.created_at,
});

const isUniqueViolation = (err: unknown): boolean => {
  const e = err as { code?: string; errcode?: number; message?: string };
  // PostgreSQL 23505; SQLite SQLITE_CONSTRAINT_UNIQUE (2067).
  return (
    e.code === '23505' || e.errcode === 2067 || /UNIQUE constraint failed/.test(e.message ?? '')
  );
};

export function userStore(db: Kysely<Database>): UserStore {
  return {
    async create({ email, passwordHash, plan, now }) {
      try {
        const row = await db
          .insertInto('users')
          .values({ email, password_hash: passwordHash, plan, created_at: now, updated_at: now })
          .returning(['id', 'email', 'plan', 'created_at'])
          .executeTakeFirstOrThrow();
        return toUser(row);
      } catch (err) {
        if (isUniqueViolation(err)) return 'email_taken';
        throw err;
      }
    },
    async findByEmail(email) {
      const row = await db
        .selectFrom('users')
        .selectAll()
        .where('email', '=', email)
        .executeTakeFirst();
      return row ? { user: toUser(row), passwordHash: row.password_hash } : null;
    },
    async findById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row ? toUser(row) : null;
    },
    async setPlan(id, plan, now) {
      const res = await db
        .updateTable('users')
        .set({ plan, updated_at: now })
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(res.numUpdatedRows) > 0;
    },
    async webhookNonce(id, fresh) {
      // One read once the account has a nonce (every delivery attempt asks); the first use
      // writes one, and of two writers at once the first wins.
      const read = async () =>
        (
          await db
            .selectFrom('users')
            .select('webhook_nonce')
            .where('id', '=', id)
            .executeTakeFirst()
        )?.webhook_nonce ?? null;
      const known = await read();
      if (known !== null) return known;
      await db
        .updateTable('users')
        .set({ webhook_nonce: fresh })
        .where('id', '=', id)
        .where('webhook_nonce', 'is', null)
        .execute();
      return (await read()) ?? fresh;
    },
    async setWebhookNonce(id, nonce) {
      await db.updateTable('users').set({ webhook_nonce: nonce }).where('id', '=', id).execute();
    },
  };
}
