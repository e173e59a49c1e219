/**
 * API keys (domain/store.ts `KeyStore`). The key hook reads a key by its hash on every
 * authenticated request, so that read is on the hot path (hot-path.ts): raw statements, one
 * statement per event-loop turn on PostgreSQL (`turnBatcher`), and on SQLite the rows
 * remembered between requests while nothing has changed them (remembered-rows.ts).
 */
import type { Kysely, Selectable, UpdateObject } from 'kysely';
import type { ApiKeyRecord, KeyStore, User } from '../../domain/store.ts';
import { deepFreeze } from '../../lib/deep-freeze.ts';
import type { DialectName } from './connect.ts';
import { type HotPath, rawRunner, turnBatcher } from './hot-path.ts';
import { type RememberedRows, rememberedRows } from './remembered-rows.ts';
import { lockUser } from './row-locks.ts';
import type { ApiKeysTable, Database } from './schema.ts';
import { toUser } from './user-store.ts';

const toKey = (row: Selectable<ApiKeysTable>): ApiKeyRecord => ({
  id: Number(row.id),
  userId: Number(row.user_id),
  name: row.name,
  prefix: row.prefix,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

/** A key's row with its account's, as the hot-path lookups read them. */
type KeyWithOwner = Selectable<ApiKeysTable> & {
  email: string;
  plan: string;
  user_created_at: number;
};
const KEY_WITH_OWNER = `k.id, k.user_id, k.name, k.prefix, k.key_hash, k.created_at,
  k.last_used_at, k.revoked_at, k.signing_nonce, u.email, u.plan,
  u.created_at AS user_created_at`;
const KEY_BY_HASH = `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
  WHERE k.key_hash = ? AND k.revoked_at IS NULL`;
const ownerOf = (row: KeyWithOwner): User =>
  toUser({ id: row.user_id, email: row.email, plan: row.plan, created_at: row.user_created_at });

/** Active keys a SQLite node remembers (remembered-rows.ts), a few hundred bytes each. */
const REMEMBERED_KEYS = 10_000;

type FoundKey = NonNullable<Awaited<ReturnType<KeyStore['findActiveByHash']>>>;

export function keyStore(db: Kysely<Database>, dialect: DialectName, hot: HotPath): KeyStore {
  return { ...keyWrites(db, dialect), ...keyLookups(db, dialect, hot) };
}

/** Keys created, listed, revoked, re-signed and marked used. */
function keyWrites(
  db: Kysely<Database>,
  dialect: DialectName,
): Pick<KeyStore, 'createWithinLimit' | 'listActive' | 'revoke' | 'setSigningNonce' | 'touch'> {
  return {
    async createWithinLimit({ userId, name, prefix, keyHash, signingNonce, now, maxActive }) {
      return db.transaction().execute(async (trx) => {
        // Serialise key creation per account so two concurrent creates cannot both pass
        // the count.
        await lockUser(trx, dialect, userId);
        const { n } = await trx
          .selectFrom('api_keys')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .where('revoked_at', 'is', null)
          .executeTakeFirstOrThrow();
        if (Number(n) >= maxActive) return 'limit_reached' as const;
        const row = await trx
          .insertInto('api_keys')
          .values({
            user_id: userId,
            name,
            prefix,
            key_hash: keyHash,
            signing_nonce: signingNonce,
            created_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return toKey(row);
      });
    },
    async listActive(userId) {
      const rows = await db
        .selectFrom('api_keys')
        .selectAll()
        .where('user_id', '=', userId)
        .where('revoked_at', 'is', null)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .execute();
      return rows.map(toKey);
    },
    revoke: (userId, keyId, now) => updateActive(db, { userId, keyId }, { revoked_at: now }),
    setSigningNonce: (userId, keyId, nonce) =>
      updateActive(db, { userId, keyId }, { signing_nonce: nonce }),
    async touch(keyId, now, minIntervalMs) {
      await db
        .updateTable('api_keys')
        .set({ last_used_at: now })
        .where('id', '=', keyId)
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', now - minIntervalMs)]),
        )
        .execute();
    },
  };
}

/** The hot path's key lookups: remembered on SQLite, batched per turn on PostgreSQL. */
function keyLookups(
  db: Kysely<Database>,
  dialect: DialectName,
  hot: HotPath,
): Pick<KeyStore, 'findActiveByHash' | 'findActiveById' | 'isActive'> {
  const raw = rawRunner(db, dialect, hot);
  const direct = hot.direct ?? null;
  const remembered: RememberedRows<FoundKey> | null = direct
    ? rememberedRows(direct, { max: REMEMBERED_KEYS })
    : null;
  const found = (row: KeyWithOwner | undefined): FoundKey | null =>
    row ? { key: toKey(row), keyHash: row.key_hash, user: ownerOf(row) } : null;
  const byHash = turnBatcher<string, KeyWithOwner | undefined>(hot, async (hashes) => {
    const rows = await raw<KeyWithOwner>(
      `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.key_hash = ANY(?::text[]) AND k.revoked_at IS NULL`,
      [hashes],
    );
    const found = new Map(rows.map((row) => [row.key_hash, row]));
    return hashes.map((hash) => found.get(hash));
  });
  return {
    async findActiveByHash(keyHash) {
      if (byHash) return found(await byHash.load(keyHash));
      if (remembered && direct?.available()) {
        return remembered.get(keyHash, () =>
          deepFreeze(found(direct.all<KeyWithOwner>(KEY_BY_HASH, [keyHash])[0])),
        );
      }
      return found((await raw<KeyWithOwner>(KEY_BY_HASH, [keyHash]))[0]);
    },
    async findActiveById(keyId) {
      const [row] = await raw<KeyWithOwner>(
        `SELECT ${KEY_WITH_OWNER} FROM api_keys k JOIN users u ON u.id = k.user_id
          WHERE k.id = ? AND k.revoked_at IS NULL`,
        [keyId],
      );
      return row ? { key: toKey(row), signingNonce: row.signing_nonce, user: ownerOf(row) } : null;
    },
    async isActive(keyId) {
      const rows = await raw('SELECT 1 FROM api_keys WHERE id = ? AND revoked_at IS NULL', [keyId]);
      return rows.length > 0;
    },
  };
}

/** Writes `update` to an active key of the account; false when it has no such key. */
async function updateActive(
  db: Kysely<Database>,
  key: { userId: number; keyId: number },
  update: UpdateObject<Database, 'api_keys'>,
): Promise<boolean> {
  const res = await db
    .updateTable('api_keys')
    .set(update)
    .where('id', '=', key.keyId)
    .where('user_id', '=', key.userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}
