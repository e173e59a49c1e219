/**
 * Dashboard sessions (domain/store.ts `SessionStore`): rows keyed by the SHA-256 of the
 * cookie value, read with their account in one join.
 */
import type { Kysely } from 'kysely';
import type { SessionStore } from '../../domain/store.ts';
import type { Database } from './schema.ts';
import { toUser } from './user-store.ts';

export function sessionStore(db: Kysely<Database>): SessionStore {
  return {
    async create({ idHash, userId, now, expiresAt }) {
      await db
        .insertInto('sessions')
        .values({ id: idHash, user_id: userId, created_at: now, expires_at: expiresAt })
        .execute();
    },
    async findUser(idHash, now) {
      const row = await db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['users.id', 'users.email', 'users.plan', 'users.created_at'])
        .where('sessions.id', '=', idHash)
        .where('sessions.expires_at', '>', now)
        .executeTakeFirst();
      return row ? toUser(row) : null;
    },
    async delete(idHash) {
      await db.deleteFrom('sessions').where('id', '=', idHash).execute();
    },
    async deleteExpired(now) {
      const res = await db.deleteFrom('sessions').where('expires_at', '<=', now).executeTakeFirst();
      return Number(res.numDeletedRows);
    },
  };
}
