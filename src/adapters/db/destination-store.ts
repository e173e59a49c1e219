/** Storage destinations (domain/destinations/store.ts `DestinationStore`). */
import type { Kysely, Selectable } from 'kysely';
import type { DestinationStore, StorageDestination } from '../../domain/destinations/store.ts';
import type { DialectName } from './connect.ts';
import { lockUser } from './row-locks.ts';
import type { Database, StorageDestinationsTable } from './schema.ts';

const toDestination = (row: Selectable<StorageDestinationsTable>): StorageDestination => ({
  seq: Number(row.seq),
  id: row.id,
  userId: Number(row.user_id),
  name: row.name,
  endpoint: row.endpoint,
  region: row.region,
  bucket: row.bucket,
  prefix: row.prefix,
  accessKeyId: row.access_key_id,
  secretSealed: row.secret_sealed,
  pathStyle: Boolean(row.path_style),
  acl: row.acl === 'public-read' ? 'public-read' : 'private',
  createdAt: Number(row.created_at),
  testedAt: Number(row.tested_at),
});

export function destinationStore(db: Kysely<Database>, dialect: DialectName): DestinationStore {
  return {
    async createWithinLimit(destination, max) {
      const create = async (trx: Kysely<Database>) => {
        // Serialised per account, as monitors are: two creates at once each see the other.
        await lockUser(trx, dialect, destination.userId);
        const { n } = await trx
          .selectFrom('storage_destinations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', destination.userId)
          .executeTakeFirstOrThrow();
        if (Number(n) >= max) return 'limit_reached' as const;
        const row = await trx
          .insertInto('storage_destinations')
          .values({
            id: destination.id,
            user_id: destination.userId,
            name: destination.name,
            endpoint: destination.endpoint,
            region: destination.region,
            bucket: destination.bucket,
            prefix: destination.prefix,
            access_key_id: destination.accessKeyId,
            secret_sealed: destination.secretSealed,
            path_style: destination.pathStyle,
            acl: destination.acl,
            created_at: destination.createdAt,
            tested_at: destination.testedAt,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return toDestination(row);
      };
      return db.isTransaction ? create(db) : db.transaction().execute(create);
    },
    async list(userId) {
      const rows = await db
        .selectFrom('storage_destinations')
        .selectAll()
        .where('user_id', '=', userId)
        .orderBy('seq')
        .execute();
      return rows.map(toDestination);
    },
    async get(userId, id) {
      const row = await db
        .selectFrom('storage_destinations')
        .selectAll()
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? toDestination(row) : null;
    },
    async delete(userId, id) {
      const result = await db
        .deleteFrom('storage_destinations')
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async markTested(userId, id, at) {
      await db
        .updateTable('storage_destinations')
        .set({ tested_at: at })
        .where('user_id', '=', userId)
        .where('id', '=', id)
        .execute();
    },
  };
}
